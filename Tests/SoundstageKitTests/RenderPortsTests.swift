import AudioFiles
import Foundation
import Testing

/// `render --input` and `--port` feed what `run` receives on its JACK ports, and refuse by name what a
/// patch does not have.
@Suite struct RenderPortsTests {
    /// A voice processor in bypass with its ports: its output is its microphone, delayed by its latency.
    static let patch = """
        version: 1
        engine: { sampleRate: 48000, outputs: 1, inputs: 1 }
        nodes:
          - name: vp
            kind: voiceprocessor
            params: { bypass: true, referenceChannels: 1 }
        connections:
          - { from: vp, to: main }
        """

    static func write(_ channels: [[Float]], to path: String) throws {
        let writer = try AudioFileWriter(
            path: path, format: .wav, sampleRate: 48_000, channelCount: channels.count, encoding: .float32)
        let frames = channels[0].count
        var interleaved = [Float](repeating: 0, count: frames * channels.count)
        for f in 0..<frames { for c in channels.indices { interleaved[f * channels.count + c] = channels[c][f] } }
        try interleaved.withUnsafeBufferPointer { try writer.write(interleaved: $0, frames: frames) }
        try writer.close()
    }

    static func noise(_ frames: Int, seed: UInt32) -> [Float] {
        var state = seed
        return (0..<frames).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: state)) / Float(UInt32.max)
        }
    }

    @Test func aPortFedFromAFileReachesTheNodeAsJackWouldDeliverIt() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let patch = dir.appendingPathComponent("vp.yaml").path
        try Self.patch.write(toFile: patch, atomically: true, encoding: .utf8)
        let mic = Self.noise(24_000, seed: 5)
        let micPath = dir.appendingPathComponent("mic.wav").path
        try Self.write([mic], to: micPath)
        let out = dir.appendingPathComponent("out.wav").path
        let r = try Fixtures.run(
            Fixtures.executable,
            ["render", patch, "--out", out, "--duration", "0.75", "--block", "333", "--port", "vp_mic_1=\(micPath)"])
        #expect(r.status == 0, "\(r.stderr)")
        let rendered = try AudioFileReader.load(path: out).channels[0]
        #expect(rendered.count == 36_000)
        // The latency: where the first sample of the microphone comes out.
        let latency = try #require(rendered.firstIndex { $0 != 0 })
        #expect(rendered[latency] == mic[0])
        #expect(latency == 720, "latency \(latency) frames: one frame of framing and half a frame of the canceller")
        // Bit for bit, then silence once the file has ended.
        #expect(Array(rendered[latency..<(latency + 24_000)]) == mic)
        #expect(rendered[(latency + 24_000)...].allSatisfy { $0 == 0 })
    }

    @Test func portsAndInputsThePatchDoesNotHaveAreRefusedByName() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let patch = dir.appendingPathComponent("vp.yaml").path
        try Self.patch.write(toFile: patch, atomically: true, encoding: .utf8)
        let mono = dir.appendingPathComponent("mono.wav").path
        let stereo = dir.appendingPathComponent("stereo.wav").path
        try Self.write([Self.noise(4_800, seed: 1)], to: mono)
        try Self.write([Self.noise(4_800, seed: 2), Self.noise(4_800, seed: 3)], to: stereo)
        let out = dir.appendingPathComponent("out.wav").path
        func render(_ extra: [String]) throws -> Fixtures.Result {
            try Fixtures.run(Fixtures.executable, ["render", patch, "--out", out, "--duration", "0.1"] + extra)
        }
        let unknown = try render(["--port", "vp_mic_9=\(mono)"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("no input port 'vp_mic_9'") && unknown.stderr.contains("vp_mic_1, vp_ref_1"))
        let wide = try render(["--port", "vp_ref_1=\(stereo)"])
        #expect(wide.status != 0 && wide.stderr.contains("2 channels; a port takes a mono file"), "\(wide.stderr)")
        let malformed = try render(["--port", "vp_mic_1"])
        #expect(malformed.status != 0 && malformed.stderr.contains("PORT=FILE"), "\(malformed.stderr)")
        let tooWide = try render(["--input", stereo])
        #expect(tooWide.status != 0 && tooWide.stderr.contains("only 1 capture port (in_1)"), "\(tooWide.stderr)")
        let missing = try render(["--input", dir.appendingPathComponent("none.wav").path])
        #expect(missing.status != 0 && missing.stderr.contains("--input: cannot read"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
