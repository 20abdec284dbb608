// Recorders over OSC: a take of a known signal, its notifications, and the errors a client can cause.
import AudioFiles
import AudioGraph
import Foundation
@testable import OSCControl
import Testing

@Suite struct OSCRecorderTests {
    @Test func recordForADurationWritesExactlyThatManyFramesOfTheNode() throws {
        let f = try OSCFixture()
        try f.playLoopingDC(0.25)
        let created = f.client.command(
            "/recorder/new",
            [
                .string("take"), .string("p"), .string("take.wav"),
                .string("encoding"), .string("float32"), .string("metering"), .int32(1)
            ])
        #expect(created?.arguments == [.string("/recorder/new"), .string("take"), .string("take.wav"), .int32(1)])
        #expect(f.client.command("/notify", [.int32(1)])?.address == "/done")
        #expect(f.client.command("/recorder/take/record", [.float(0.25)])?.address == "/done")
        f.client.receive(timeout: 5) { $0.address == "/recorder/finished" }
        #expect(f.client.take("/recorder/finished").first?.arguments == [.string("take"), .int32(1)])
        let status = try #require(f.client.request("/recorder/take/status"))
        #expect(status.arguments[0] == .int32(0) && status.arguments[2] == .int64(12_000), "\(status)")
        let data = try AudioFileReader.load(path: f.directory + "/take.wav")
        #expect(data.channels.count == 1 && data.channels[0].count == 12_000)
        #expect(data.channels[0].allSatisfy { $0 == 0.25 }, "the player's own output, at unity")
        let listed = f.client.request("/recorder/list", reply: "/recorder/info")
        #expect(listed?.arguments.first == .string("take"))
        #expect(f.client.command("/recorder/take/delete")?.address == "/done")
        #expect(!FileManager.default.fileExists(atPath: f.directory + "/take.wav"))
        #expect(f.client.command("/recorder/take/free")?.address == "/done")
        #expect(f.client.command("/recorder/take/record")?.errorCode == 10)
    }

    @Test func pauseStopAndMeteringWhileRecording() throws {
        let f = try OSCFixture()
        try f.playLoopingDC(0.5)
        _ = f.client.command("/recorder/new", [.string("r"), .string("p"), .string("r.flac")])
        #expect(f.client.request("/recorder/r/power", reply: "/error")?.errorCode == 14, "metering is off")
        #expect(f.client.command("/recorder/r/metering", [.int32(1)])?.address == "/done")
        #expect(f.client.command("/recorder/r/record")?.address == "/done")
        usleep(200_000)
        let power = try #require(f.client.request("/recorder/r/power"))
        if power.arguments.count == 3, case .float(let peak) = power.arguments[2] {
            #expect(abs(peak - Float(20 * log10(0.5))) < 0.1, "peak \(peak)")
        } else {
            Issue.record("power reply \(power)")
        }
        #expect(f.client.command("/recorder/r/pause")?.address == "/done")
        let stopped = f.client.command("/recorder/r/stop")
        #expect(stopped?.address == "/done")
        let data = try AudioFileReader.load(path: f.directory + "/r.flac")
        #expect(data.channels[0].count > 4_800, "\(data.channels[0].count) frames")
    }

    @Test func badRequestsGetErrorsThatNameTheProblem() throws {
        let f = try OSCFixture()
        #expect(
            f.client.command("/recorder/new", [.string("x"), .string("main"), .string("/etc/x.wav")])?.errorCode == 64)
        #expect(f.client.command("/recorder/new", [.string("x"), .string("nobody"), .string("x.wav")])?.errorCode == 10)
        #expect(f.client.command("/recorder/new", [.string("x"), .string("main"), .string("x.xyz")])?.errorCode == 42)
        // A folder that does not exist is refused now, not at `record`.
        let missing = f.client.command(
            "/recorder/new", [.string("x"), .string("main"), .string("no-such-folder/x.wav")])
        #expect(missing?.errorCode == 42)
        #expect(
            missing?.arguments.last.flatMap { if case .string(let m) = $0 { m } else { nil } }?.contains(
                "does not exist") == true,
            "\(String(describing: missing?.arguments))")
        #expect(
            f.client.command(
                "/recorder/new",
                [
                    .string("x"), .string("main"), .string("x.wav"), .string("format"),
                    .string("tape")
                ])?.errorCode == 22)
        #expect(
            f.client.command(
                "/recorder/new",
                [
                    .string("x"), .string("main"), .string("x.wav"), .string("speed"),
                    .float(2)
                ])?.errorCode == 20)
        #expect(
            f.client.command("/recorder/new", [.string("x"), .string("main"), .string("x.wav")])?.address == "/done")
        #expect(f.client.command("/recorder/new", [.string("x"), .string("main"), .string("y.wav")])?.errorCode == 11)
        #expect(f.client.command("/recorder/x/record", [.float(-1)])?.errorCode == 22)
        #expect(f.client.command("/recorder/x/rewind")?.errorCode == 60)
        #expect(f.client.command("/recorder/x/free")?.address == "/done")
    }
}

@Suite struct OSCPatchMissingFileTests {
    @Test func aPatchWithAMissingFileGetsAnErrorAndTheRestLoads() throws {
        let f = try OSCFixture()
        let patch = f.directory + "/partial.yaml"
        try """
        version: 1
        buffers: [{ name: gone, file: nowhere.wav }]
        nodes:
          - { name: a, kind: player, params: { buffer: gone } }
          - { name: b, kind: mixer }
        connections: [{ from: a, to: b }, { from: b, to: main }]
        """.write(toFile: patch, atomically: true, encoding: .utf8)
        f.client.send("/patch/load", [.string("partial.yaml")])
        f.client.receive(timeout: 5) { $0.address == "/done" && $0.arguments.first == .string("/patch/load") }
        let errors = f.client.takeErrors()
        #expect(
            errors.contains { $0.errorCode == 42 && $0.arguments.first == .string("/patch/load") },
            "a missing file gets an /error: \(errors)")
        #expect(
            f.client.take("/done").contains { $0.arguments.first == .string("/patch/load") }, "and the load completes")
        let names = Set(f.engine.nodes().map(\.name))
        #expect(names.isSuperset(of: ["a", "b"]), "\(names)")
    }
}

extension OSCFixture {
    /// A player `p` looping a constant of `level` (a 4800-frame buffer `dc`), made over OSC and playing.
    func playLoopingDC(_ level: Float) throws {
        try engine.addBuffer(
            SampleBuffer(name: "dc", channels: [Array(repeating: level, count: 4_800)], sampleRate: 48_000))
        _ = client.command(
            "/node/new",
            [
                .string("player"), .string("p"), .string("buffer"), .string("dc"),
                .string("loop"), .int32(1), .string("playing"), .int32(1)
            ])
    }
}
