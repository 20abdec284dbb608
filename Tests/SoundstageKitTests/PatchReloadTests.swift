// Hot reload's diff (`PatchLoader.reload`), offline: what stays keeps playing and glides, what the edit
// did not touch keeps its live value, what goes fades, and a broken patch changes nothing.
import AudioFiles
import AudioGraph
import DSPTestSupport
import Foundation
import Patches
import SoundstageKit
import Testing

@Suite struct PatchReloadTests {
    static func patch(_ nodes: String, connections: String, buffers: String = "") -> String {
        """
        version: 1
        engine: { sampleRate: 48000, outputs: 2 }
        buffers:
          - name: low
            generate: { waveform: sine, frequency: 220, duration: 1.0, amplitude: 1.0 }
        \(buffers)
        nodes:
        \(nodes)
        connections:
        \(connections)
        """
    }

    static let tone =
        "  - { name: tone, kind: player, params: { buffer: low, loop: true, playing: true, volume: 0.25 } }"
    static let echo = "  - { name: echo, kind: delay, params: { delayTime: 0.1, wetDryMix: 20 } }"

    /// A loaded patch, its file, and the folder to remove.
    private func start(_ text: String) throws -> (LoadedPatch, String, URL) {
        let dir = try Fixtures.temporaryDirectory()
        let path = try Fixtures.write(text, to: "live.yaml", in: dir)
        return (try PatchLoader.load(path: path), path, dir)
    }

    private func edit(_ path: String, _ text: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test func whatStaysKeepsPlayingAndGlidesWhatTheEditLeftKeepsItsLiveValue() throws {
        let (loaded, path, dir) = try start(
            Self.patch(
                Self.tone + "\n" + Self.echo, connections: "  - { from: tone, to: echo }\n  - { from: echo, to: main }")
        )
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = loaded.engine
        let renderer = OfflineRenderer(engine: engine)
        _ = renderer.render(frameCount: 4800, hostBlockFrames: 256)
        // Set over OSC, not in the patch: an edit elsewhere leaves it.
        try engine.set("tone", "pan", to: .float(-0.5))
        let origin = try #require(try engine.playerTime("tone", forSampleTime: 4800))

        try edit(
            path,
            Self.patch(
                Self.tone.replacingOccurrences(of: "volume: 0.25", with: "volume: 0.75"),
                connections: "  - { from: tone, to: main }"))
        let (document, summary) = try PatchLoader.reload(path: path, into: engine, baseline: loaded.document)
        #expect(summary.removed == ["echo"])
        #expect(summary.changedParameters == ["tone.volume"])
        #expect(summary.added.isEmpty && summary.replaced.isEmpty)
        #expect(try engine.get("tone", "volume") == .float(0.75))
        #expect(try engine.get("tone", "pan") == .float(-0.5))
        #expect(Set(engine.connections().map(\.description)) == ["tone:0 → main:0", "main:0 → output:0"])
        let after = renderer.render(frameCount: 9600, hostBlockFrames: 256)
        // The player's timeline went on (no restart), and the level rose without a step.
        #expect(try engine.playerTime("tone", forSampleTime: 4800 + 9600) == origin + 9600)
        let ratio = ClickDetector.secondDifferenceRatio(after[0][...], frequency: 220, sampleRate: 48_000)
        #expect(ratio < 2, "ratio \(ratio)")
        #expect(abs(SignalStats.rms(after[0][4800...]) / SignalStats.rms(after[1][4800...]) - 1) > 0.1)

        // The same file again changes nothing.
        let again = try PatchLoader.reload(path: path, into: engine, baseline: document)
        #expect(again.summary.isEmpty, "\(again.summary)")
    }

    @Test func removedParametersReturnToTheirDefaultKindChangesReplaceAndBuffersFollow() throws {
        let (loaded, path, dir) = try start(
            Self.patch(
                Self.tone + "\n" + Self.echo, connections: "  - { from: tone, to: echo }\n  - { from: echo, to: main }")
        )
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = loaded.engine
        let tone = Self.tone.replacingOccurrences(of: ", volume: 0.25", with: "")
            .replacingOccurrences(of: "buffer: low", with: "buffer: high")
        try edit(
            path,
            Self.patch(
                tone + "\n  - { name: echo, kind: reverb, params: { wetDryMix: 30 } }",
                connections: "  - { from: tone, to: echo }\n  - { from: echo, to: main }",
                buffers:
                    "  - name: high\n    generate: { waveform: sine, frequency: 330, duration: 1.0, amplitude: 0.5 }"))
        let (_, summary) = try PatchLoader.reload(path: path, into: engine, baseline: loaded.document)
        #expect(try engine.get("tone", "volume") == .float(1))
        #expect(try engine.get("tone", "buffer") == .string("high"))
        #expect(summary.replaced == ["echo"])
        #expect(engine.nodes().first { $0.name == "echo" }?.kind == .reverb)
        #expect(summary.buffersLoaded == ["high"])
        #expect(
            Set(engine.connections().map(\.description)) == ["tone:0 → echo:0", "echo:0 → main:0", "main:0 → output:0"])
    }

    /// A parameter fixed at creation (an EQ's band count) cannot be set on a live node: the node is made
    /// again with the patch's parameters, and the rest of the diff applies as usual.
    @Test func aChangeToACreationOnlyParameterMakesTheNodeAgain() throws {
        let eq = "  - { name: tone2, kind: eq, params: { bands: 2, band0.frequency: 500 } }"
        let (loaded, path, dir) = try start(
            Self.patch(
                Self.tone + "\n" + eq, connections: "  - { from: tone, to: tone2 }\n  - { from: tone2, to: main }"))
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = loaded.engine
        try edit(
            path,
            Self.patch(
                Self.tone.replacingOccurrences(of: "volume: 0.25", with: "volume: 0.5") + "\n"
                    + eq.replacingOccurrences(of: "bands: 2", with: "bands: 3"),
                connections: "  - { from: tone, to: tone2 }\n  - { from: tone2, to: main }"))
        let (_, summary) = try PatchLoader.reload(path: path, into: engine, baseline: loaded.document)
        #expect(summary.replacedWhole == nil, "\(summary)")
        #expect(summary.replaced == ["tone2"])
        #expect(summary.changedParameters == ["tone.volume"])
        #expect(try engine.get("tone2", "bands") == .int(3))
        #expect(try engine.get("tone2", "band0.frequency") == .float(500))
        #expect(Set(engine.connections().map(\.description)).contains("tone:0 → tone2:0"))
    }

    /// A buffer is reloaded when its audio changed, in the patch or in the file on disk, and kept when
    /// it did not (its players keep their material).
    @Test func aBufferIsReloadedWhenItsFileChangedOnDiskAndKeptOtherwise() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = dir.appendingPathComponent("loop.wav").path
        func writeLoop(_ amplitude: Float) throws {
            let samples = (0..<4800).map { amplitude * Float(sin(2 * Double.pi * 100 * Double($0) / 48_000)) }
            try AudioFileWriter.write(AudioData(channels: [samples], sampleRate: 48_000), to: wav)
        }
        try writeLoop(0.2)
        let text = Self.patch(
            "  - { name: deck, kind: player, params: { buffer: loop, loop: true, playing: true } }",
            connections: "  - { from: deck, to: main }", buffers: "  - { name: loop, file: loop.wav }")
        let path = try Fixtures.write(text, to: "live.yaml", in: dir)
        let loaded = try PatchLoader.load(path: path)
        let same = try PatchLoader.reload(path: path, into: loaded.engine, baseline: loaded.document)
        #expect(same.summary.isEmpty, "\(same.summary)")
        try writeLoop(0.4)
        let changed = try PatchLoader.reload(path: path, into: loaded.engine, baseline: same.document)
        #expect(changed.summary.buffersLoaded == ["loop"])
        #expect(changed.summary.changedParameters.isEmpty && changed.summary.replaced.isEmpty)
    }

    /// A random patch of players and effects (seeded): names from a small pool, so successive patches
    /// share, drop, add and re-kind nodes; parameters from a few values, sometimes left out.
    static func randomPatch(_ random: inout SeededRandom) -> String {
        var nodes: [String] = []
        var connections: [String] = []
        var used: Set<String> = []
        for _ in 0..<random.nextInt(1..<6) {
            let name = "n\(random.nextInt(0..<6))"
            guard used.insert(name).inserted else { continue }
            var params: [String] = []
            func maybe(_ text: String) { if random.nextInt(0..<3) > 0 { params.append(text) } }
            let kind = ["player", "delay", "reverb", "eq", "mixer"][random.nextInt(0..<5)]
            switch kind {
            case "player":
                params = ["buffer: \(["low", "saw"][random.nextInt(0..<2)])", "loop: true", "playing: true"]
                maybe("volume: \([0.1, 0.3, 0.5][random.nextInt(0..<3)])")
                maybe("pan: \([-1, 0, 1][random.nextInt(0..<3)])")
            case "delay":
                maybe("delayTime: \([0.1, 0.2][random.nextInt(0..<2)])")
                maybe("wetDryMix: \([10, 40][random.nextInt(0..<2)])")
            case "reverb": maybe("wetDryMix: \([10, 40][random.nextInt(0..<2)])")
            case "eq":
                maybe("bands: \(random.nextInt(1..<4))")
                maybe("globalGain: \([0, 3][random.nextInt(0..<2)])")
            default: maybe("outputVolume: \([0.5, 1][random.nextInt(0..<2)])")
            }
            nodes.append("  - { name: \(name), kind: \(kind), params: { \(params.joined(separator: ", ")) } }")
            connections.append("  - { from: \(name), to: main }")
        }
        let saw = random.nextInt(0..<2) == 0 ? 110 : 220
        return Self.patch(
            nodes.joined(separator: "\n"), connections: connections.joined(separator: "\n"),
            buffers: "  - name: saw\n    generate: { waveform: saw, frequency: \(saw), duration: 1.0, amplitude: 0.3 }")
    }

    /// After any sequence of edits, the reloaded engine has the graph a fresh load of the same file has:
    /// the same nodes of the same kinds, every parameter, connection and buffer.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func anySequenceOfReloadsEndsInTheGraphAFreshLoadGives(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Fixtures.write(Self.randomPatch(&random), to: "live.yaml", in: dir)
        let loaded = try PatchLoader.load(path: path)
        let engine = loaded.engine
        let renderer = OfflineRenderer(engine: engine)
        var baseline = loaded.document
        for step in 0..<25 {
            _ = renderer.render(frameCount: 1024, hostBlockFrames: 256)
            try edit(path, Self.randomPatch(&random))
            baseline = try PatchLoader.reload(path: path, into: engine, baseline: baseline).document
            let fresh = try PatchLoader.load(path: path).engine
            let context = Comment(
                rawValue: "seed \(seed), step \(step):\n\(try String(contentsOfFile: path, encoding: .utf8))")
            #expect(engine.nodes().map(\.name) == fresh.nodes().map(\.name), context)
            for (live, made) in zip(engine.nodes(), fresh.nodes()) {
                #expect(live.kind == made.kind, context)
                #expect(live.parameters == made.parameters, "\(live.name): \(context)")
            }
            #expect(Set(engine.connections()) == Set(fresh.connections()), context)
            #expect(engine.buffers().map(\.name) == fresh.buffers().map(\.name), context)
            for (live, made) in zip(engine.buffers(), fresh.buffers()) { #expect(live.hasSameAudio(as: made), context) }
        }
    }

    @Test func aBrokenEditChangesNothingAndSaysWhere() throws {
        let (loaded, path, dir) = try start(Self.patch(Self.tone, connections: "  - { from: tone, to: main }"))
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = loaded.engine
        let before = (engine.nodes(), engine.connections(), engine.buffers().map(\.name))
        try edit(
            path,
            Self.patch(
                Self.tone.replacingOccurrences(of: "volume: 0.25", with: "volume: 3") + "\n" + Self.echo,
                connections: "  - { from: echo, to: nowhere }"))
        let error = #expect(throws: PatchLoadError.self) {
            try PatchLoader.reload(path: path, into: engine, baseline: loaded.document)
        }
        let text = error?.description ?? ""
        #expect(text.contains("\(path):8:"), "\(text)")
        #expect(text.contains("nowhere"), "\(text)")
        #expect(engine.nodes() == before.0)
        #expect(engine.connections() == before.1)
        #expect(engine.buffers().map(\.name) == before.2)
    }
}
