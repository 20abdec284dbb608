import AudioFiles
import AudioGraph
import DSPTestSupport
import Foundation
import Patches
import SoundstageKit
import Testing

@Suite struct PatchLoaderTests {
    @Test func everyShippedPatchLoadsAndMakesSound() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Fixtures.patches.path)
            .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".json") }
        #expect(files.count >= 2)
        for file in files {
            let loaded = try PatchLoader.load(path: Fixtures.patches.appendingPathComponent(file).path)
            // A patch that listens to capture ports (a voice rig) hears a talker-like signal there: a 150 Hz
            // voice with harmonics, in syllables (a steady tone would be noise to a voice processor).
            let talker = (0..<24_000).map { i -> Float in
                let t = Double(i) / 48_000
                var voice = 0.0
                for h in 1...12 { voice += sin(2 * Double.pi * 150 * Double(h) * t) / Double(h) }
                return Float(0.2 * max(0, sin(2 * Double.pi * 4 * t)) * voice)
            }
            let inputs = (0..<loaded.engine.configuration.inputChannelCount).map { _ in talker }
            let out = OfflineRenderer(engine: loaded.engine).render(
                frameCount: 24_000, hostBlockFrames: 256, inputs: inputs.isEmpty ? nil : inputs)
            #expect(SignalStats.peak(out[0][...]) > 0.05, "\(file) is silent")
            #expect(out.allSatisfy { $0.allSatisfy(\.isFinite) })
        }
    }

    /// Loads `text` as a patch and returns its diagnostics.
    func diagnostics(_ text: String, files: [String: Data] = [:]) throws -> [PatchDiagnostic] {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for (name, data) in files { try data.write(to: dir.appendingPathComponent(name)) }
        let path = try Fixtures.write(text, to: "p.yaml", in: dir)
        return PatchLoader.check(path: path)
    }

    @Test func unknownKindIsReportedAtTheKind() throws {
        let d = try diagnostics(
            """
            version: 1
            nodes:
              - name: a
                kind: reverbb
            """)
        #expect(d.count == 1)
        #expect(d.first?.location == Patches.SourceLocation(line: 4, column: 11))
        #expect(d.first?.message == "unknown node kind 'reverbb' (kinds: \(NodeKind.allNames))")
        #expect(d.first?.description.hasSuffix("p.yaml:4:11: error: " + (d.first?.message ?? "")) == true)
    }

    @Test func badParametersAreReportedWhereTheyAreWritten() throws {
        let d = try diagnostics(
            """
            version: 1
            nodes:
              - name: a
                kind: player
                params:
                  volume: 3
                  colour: red
            """)
        #expect(
            d.map(\.location) == [
                Patches.SourceLocation(line: 6, column: 15), Patches.SourceLocation(line: 7, column: 7)
            ])
        #expect(d[0].message.contains("out of range 0…1"))
        #expect(d[1].message.contains("no parameter 'colour'"))
    }

    /// Schema errors (a node without a kind, a buffer without a source) and the engine's errors of the
    /// rest (a value out of range, an unknown kind, a connection to nothing) in one pass; what follows
    /// from a left-out entry (a connection from it, a player of its buffer) is not reported again. It
    /// took one run per kind of error.
    @Test func schemaAndEngineErrorsAreReportedTogether() throws {
        let d = try diagnostics(
            """
            version: 1
            buffers:
              - name: tone
            nodes:
              - name: a
                kind: player
                params: { volume: 7, buffer: tone }
              - name: b
              - name: c
                kind: frobnicator
            connections:
              - { from: b, to: main }
              - { from: a, to: nowhere }
            """)
        #expect(d.map(\.location?.line) == [3, 7, 8, 10, 13], "\(d.map(\.description))")
        #expect(d[0].message.contains("buffer 'tone' needs either 'file'"))
        #expect(d[1].message.contains("a.volume = 7.0 is out of range"))
        #expect(d[2].message.contains("node 'b' is missing required key 'kind'"))
        #expect(d[3].message.contains("unknown node kind 'frobnicator'"))
        #expect(d[4].message == "connection refers to 'nowhere', which is not a node in this patch")
    }

    /// yes/no/on/off are booleans for node parameters too, as they are for patch-level booleans.
    @Test func yamlBooleanSpellingsWorkForNodeParameters() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Fixtures.write(
            """
            version: 1
            buffers:
              - name: tone
                generate: { waveform: sine, frequency: 440, duration: 0.5 }
            nodes:
              - name: a
                kind: player
                params: { buffer: tone, playing: on, loop: yes }
              - name: b
                kind: reverb
                params: { bypass: Off }
            connections:
              - { from: a, to: main }
            """, to: "p.yaml", in: dir)
        let loaded = try PatchLoader.load(path: path)
        #expect(try loaded.engine.get("a", "playing") == .bool(true))
        #expect(try loaded.engine.get("a", "loop") == .bool(true))
        #expect(try loaded.engine.get("b", "bypass") == .bool(false))
        #expect(PatchLoader.check(path: path).isEmpty)
    }

    /// A generated tone at or above the Nyquist frequency is refused where its frequency is written.
    @Test func aToneAboveNyquistIsRefusedAtItsFrequency() throws {
        let d = try diagnostics(
            """
            version: 1
            engine: { sampleRate: 48000 }
            buffers:
              - name: high
                generate: { waveform: sine, frequency: 30000, duration: 0.5 }
            """)
        #expect(d.map(\.location) == [Patches.SourceLocation(line: 5, column: 44)])
        #expect(
            d.map(\.message) == [
                "buffer 'high': frequency 30000.0 Hz is not below the Nyquist frequency (24000.0 Hz at 48000.0 Hz)"
            ])
    }

    /// A misspelt parameter gets a "did you mean", as misspelt kinds and sections do.
    @Test func aMisspeltParameterGetsASuggestion() throws {
        let d = try diagnostics(
            """
            version: 1
            nodes:
              - name: a
                kind: player
                params: { volum: 0.5 }
            """)
        #expect(d.map(\.location) == [Patches.SourceLocation(line: 5, column: 15)])
        #expect(
            d.map(\.message) == [
                "player 'a' has no parameter 'volum' (did you mean 'volume'?) (it has: "
                    + NodeKind.player.parameters.map(\.name).joined(separator: ", ") + ")"
            ])
    }

    @Test func connectionErrorsNameTheProblem() throws {
        let d = try diagnostics(
            """
            version: 1
            nodes:
              - { name: a, kind: mixer }
              - { name: b, kind: mixer }
              - { name: p, kind: player }
            connections:
              - { from: a, to: b }
              - { from: b, to: a }
              - { from: "p:2", to: a }
              - { from: ghost, to: main }
              - { from: main, to: p }
            """)
        #expect(d.count == 4)
        #expect(d[0].location?.line == 8 && d[0].message.contains("cycle: a → b → a"))
        #expect(d[1].location?.line == 9 && d[1].message.contains("no output bus 2"))
        #expect(d[2].location?.line == 10 && d[2].message.contains("'ghost'"))
        #expect(d[3].location?.line == 11 && d[3].message.contains("no input bus"))
    }

    @Test func missingAndCorruptFilesNameTheFile() throws {
        var noise = SeededRandom(seed: 3)
        let junk = Data((0..<4000).map { _ in UInt8(truncatingIfNeeded: noise.next()) })
        let d = try diagnostics(
            """
            version: 1
            buffers:
              - name: gone
                file: nowhere.wav
              - name: junk
                file: junk.wav
            """, files: ["junk.wav": junk])
        #expect(d.count == 2)
        #expect(d[0].location?.line == 4 && d[0].message.contains("nowhere.wav"))
        #expect(d[1].location?.line == 6 && d[1].message.contains("junk.wav"))
    }

    @Test func syntaxErrorsKeepTheirLocation() throws {
        let d = try diagnostics("version: 1\nnodes:\n  - name: a\n   kind: [mixer\n")
        #expect(!d.isEmpty)
        #expect(d.first?.location != nil)
    }

    @Test func fileBuffersAreConvertedToTheEngineRate() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sine = TestSignal.sine(frequency: 1000, sampleRate: 44_100, frames: 44_100, amplitude: 0.5)
        try AudioFileWriter.write(
            AudioData(channels: [sine], sampleRate: 44_100), to: dir.appendingPathComponent("t.wav").path)
        let path = try Fixtures.write(
            """
            version: 1
            buffers: [{ name: t, file: t.wav }]
            nodes: [{ name: p, kind: player, params: { buffer: t, playing: true } }]
            connections: [{ from: p, to: output }]
            """, to: "p.yaml", in: dir)
        let loaded = try PatchLoader.load(path: path)
        let buffer = try #require(loaded.engine.buffers().first)
        #expect(buffer.frameCount == 48_000)
        let out = OfflineRenderer(engine: loaded.engine).render(frameCount: 48_000, hostBlockFrames: 128)
        let level = Goertzel.amplitude(Array(out[0][4800..<43_200]), frequency: 1000, sampleRate: 48_000)
        #expect(abs(Decibels.fromAmplitude(level / 0.5)) < 0.1)
    }

    @Test func playerFileParameterLoadsRelativeToThePatch() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ramp = TestSignal.ramp(frames: 1000, scale: 1e-3)
        try AudioFileWriter.write(
            AudioData(channels: [ramp], sampleRate: 48_000), to: dir.appendingPathComponent("r.wav").path)
        let path = try Fixtures.write(
            """
            version: 1
            nodes: [{ name: p, kind: player, params: { file: r.wav, start: 100, frames: 50, playing: true } }]
            connections: [{ from: p, to: output }]
            """, to: "p.yaml", in: dir)
        let loaded = try PatchLoader.load(path: path)
        let out = OfflineRenderer(engine: loaded.engine).render(frameCount: 100, hostBlockFrames: 64)
        #expect(Array(out[0][0..<50]) == Array(ramp[100..<150]))
        #expect(out[0][50..<100].allSatisfy { $0 == 0 })
    }

    @Test func sampleRateChangeRebuildsBuffersAtTheNewRate() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sine = TestSignal.sine(frequency: 500, sampleRate: 48_000, frames: 48_000, amplitude: 0.5)
        try AudioFileWriter.write(
            AudioData(channels: [sine], sampleRate: 48_000), to: dir.appendingPathComponent("s.wav").path)
        let path = try Fixtures.write(
            """
            version: 1
            buffers:
              - { name: f, file: s.wav, start: 4800, frames: 24000 }
              - name: g
                generate: { waveform: sine, frequency: 1000, duration: 0.5 }
            nodes:
              - { name: p, kind: player, params: { buffer: f, loop: true, playing: true } }
            connections: [{ from: p, to: output }]
            """, to: "p.yaml", in: dir)
        let loaded = try PatchLoader.load(path: path)
        #expect(loaded.engine.buffers().map(\.frameCount) == [24_000, 24_000])
        #expect(loaded.changeSampleRate(to: 44_100).isEmpty)
        #expect(loaded.engine.configuration.sampleRate == 44_100)
        #expect(loaded.engine.buffers().map(\.frameCount) == [22_050, 22_050])
        let out = OfflineRenderer(engine: loaded.engine).render(frameCount: 44_100, hostBlockFrames: 256)
        // Still 500 Hz at the new rate: the converted buffer keeps its pitch.
        let level = Goertzel.amplitude(Array(out[0][2205..<22_050]), frequency: 500, sampleRate: 44_100)
        #expect(abs(Decibels.fromAmplitude(level / 0.5)) < 0.1)
    }
}

@Suite struct PatchLoaderRecorderTests {
    @Test func recordersNamingUnknownNodesOrFormatsAreReportedAtTheirLines() throws {
        let text = """
            version: 1
            recorders:
              - { name: a, node: ghost, path: a.wav }
              - { name: b, node: main, path: b.tape }
              - { name: c, node: main, path: c.wav, format: cassette }
              - { name: d, node: main, path: d.m4a, format: aac }
              - { name: e, node: main, path: e.m4a, format: alac }
              - { name: f, node: main, path: f.take, format: wav }
            """
        do {
            _ = try PatchLoader.build(try PatchParser.parse(text: text, names: .engine))
            Issue.record("the patch should be refused")
        } catch let error as PatchLoadError {
            let lines = error.diagnostics.map { "\($0.location?.line ?? 0): \($0.message)" }
            #expect(lines.contains { $0.hasPrefix("3: recorder 'a' refers to 'ghost'") }, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("4: cannot tell a recording format from 'b.tape'") }, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("5: unknown recording format 'cassette'") }, "\(lines)")
            // ADTS into a .m4a: the extension says otherwise (ALAC in .m4a and a name with no format's
            // extension are fine).
            #expect(
                lines.contains { $0.hasPrefix("6: recording format 'aac' (AAC (ADTS)) does not match the extension") },
                "\(lines)")
            #expect(lines.count == 4, "\(lines)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}

@Suite struct PatchLoaderRecorderRefusalTests {
    /// What `Recorder` would refuse is a check error at the field that causes it: another recorder's
    /// file (however it is spelled) at the path, an encoding the format cannot store or has none of at
    /// the encoding, a name too long at the path, a channel count the format cannot take.
    @Test func recordersThatCouldNotRecordAreReportedAtTheirFields() throws {
        let long = String(repeating: "n", count: 300) + ".wav"
        let lines = [
            "version: 1",
            "engine: { outputs: 6 }",
            "recorders:",
            "  - { name: a, node: main, path: takes/mix.wav }",
            "  - { name: b, node: main, path: ./takes/../takes/mix.wav }",
            "  - { name: c, node: main, path: c.flac, encoding: float32 }",
            "  - { name: d, node: main, path: d.mp3, encoding: int24 }",
            "  - { name: e, node: main, path: e.mp3 }",
            "  - { name: f, node: main, path: \(long) }",
            "  - { name: g, node: main, path: g.flac, encoding: int16 }"
        ]
        /// "line:column" of the first `text` on `line` (1-based).
        func at(_ line: Int, _ text: String) -> String {
            let row = lines[line - 1]
            return "\(line):\(row.distance(from: row.startIndex, to: row.range(of: text)!.lowerBound) + 1)"
        }
        do {
            _ = try PatchLoader.build(try PatchParser.parse(text: lines.joined(separator: "\n"), names: .engine))
            Issue.record("the patch should be refused")
        } catch let error as PatchLoadError {
            let found = error.diagnostics.map {
                "\($0.location?.line ?? 0):\($0.location?.column ?? 0): \($0.message)"
            }
            let expected = [
                at(5, "./takes")
                    + ": recorder 'b' writes to './takes/../takes/mix.wav', which is already the file of recorder 'a'",
                at(6, "float32") + ": recorder 'c': FLAC stores integers only; use int16 or int24",
                at(7, "int24") + ": recorder 'd': MP3 is lossy and has no sample encoding",
                at(8, "e.mp3") + ": recorder 'e': MP3 takes 1 to 2 channels, not 6",
                at(9, "nnn") + ": recorder 'f' cannot write '\(long)': its file name is 304 bytes long"
            ]
            for prefix in expected {
                #expect(found.contains { $0.hasPrefix(prefix) }, "\(prefix)\nnot in \(found)")
            }
            #expect(found.count == expected.count, "\(found)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}

@Suite struct PatchLoaderMissingFileTests {
    static let text = """
        version: 1
        buffers:
          - { name: gone, file: nowhere.wav }
          - { name: tone, generate: { waveform: sine, frequency: 440, duration: 0.5, amplitude: 0.5 } }
        nodes:
          - { name: a, kind: player, params: { buffer: gone, loop: true, playing: true } }
          - { name: b, kind: player, params: { buffer: tone, loop: true, playing: true } }
          - { name: c, kind: player, params: { file: missing.flac, playing: true } }
        connections:
          - { from: a, to: main }
          - { from: b, to: main }
          - { from: c, to: main }
        """

    /// A second connection into an effect's one input replaces the first (AVAudioEngine's rule); the
    /// patch loads, with a warning at the connection that replaced, and the first source is not heard
    /// through the effect.
    @Test func aSecondConnectionIntoOneInputIsAWarning() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Fixtures.write(
            """
            version: 1
            nodes:
              - { name: a, kind: player }
              - { name: b, kind: player }
              - { name: fx, kind: reverb }
            connections:
              - { from: a, to: fx }
              - { from: b, to: fx }
              - { from: fx, to: main }
            """, to: "twice.yaml", in: dir)
        let loaded = try PatchLoader.load(path: path)
        let lines = loaded.warnings.map(\.description)
        #expect(
            lines.count == 1 && lines[0].contains(":8:") && lines[0].contains("replaces the one from 'a:0'"), "\(lines)"
        )
        #expect(loaded.engine.connections().filter { $0.destination == "fx" }.map(\.source) == ["b"])
        #expect(PatchLoader.check(path: path).isEmpty)
        #expect(PatchLoader.diagnose(path: path).map(\.severity) == [.warning])
    }

    @Test func toleratedFileProblemsBecomeWarningsAndTheRestPlays() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Fixtures.write(Self.text, to: "partial.yaml", in: dir)
        // Strict (check): errors.
        #expect(PatchLoader.check(path: path).count == 2)
        // Tolerant (run, render, /patch/load): warnings, and everything else loads and sounds.
        let loaded = try PatchLoader.load(path: path, overrides: .init(toleratesFileProblems: true))
        let lines = loaded.warnings.map(\.description)
        #expect(loaded.warnings.count == 2, "\(lines)")
        #expect(
            lines.contains { $0.contains(":3:") && $0.contains("warning:") && $0.contains("nowhere.wav") }, "\(lines)")
        #expect(lines.contains { $0.contains(":8:") && $0.contains("missing.flac") }, "\(lines)")
        #expect(Set(loaded.engine.nodes().map(\.name)).isSuperset(of: ["a", "b", "c"]))
        #expect(loaded.engine.connections().count == 4)
        let out = OfflineRenderer(engine: loaded.engine).render(frameCount: 4_800, hostBlockFrames: 256)
        #expect(SignalStats.peak(out[0][...]) > 0.1, "the player with a file that loaded plays")
    }
}

extension PatchLoaderTests {
    /// `taps:` is reserved: an empty list loads, every entry is refused where it is written.
    @Test func tapEntriesAreRefusedWhereTheyAreWritten() throws {
        let d = try diagnostics(
            """
            version: 1
            nodes:
              - { name: a, kind: mixer }
            taps:
              - { node: a }
              - node: main
                bus: 1
            """)
        let advice = "to capture a node's output use a 'recorders' entry, to watch its level use OSC /meters"
        #expect(
            d.map(\.location) == [
                Patches.SourceLocation(line: 5, column: 5), Patches.SourceLocation(line: 6, column: 5)
            ])
        #expect(
            d.map(\.message) == [
                "taps are reserved and not supported yet (tap on 'a:0'); " + advice,
                "taps are reserved and not supported yet (tap on 'main:1'); " + advice
            ])
        #expect(try diagnostics("version: 1\ntaps: []\n").isEmpty)
    }

    /// A time-pitch `overlap` other than the default is refused where it is written, not ignored.
    @Test func aTimePitchOverlapOtherThanTheDefaultIsRefused() throws {
        let d = try diagnostics(
            """
            version: 1
            nodes:
              - name: tp
                kind: timepitch
                params: { pitch: 700, overlap: 4 }
              - name: ok
                kind: timepitch
                params: { overlap: 8 }
            """)
        #expect(d.map(\.location) == [Patches.SourceLocation(line: 5, column: 36)])
        #expect(
            d.map(\.message) == [
                "tp.overlap = 4.0 is refused: only the default 8 is accepted; Rubber Band R3, which does the stretching, "
                    + "has no overlap setting, so AVAudioUnitTimePitch's other values (3…32) are refused rather than ignored"
            ])
    }
}

/// A processor that takes the engine's output for echo must not hear its own voice there: a patch that
/// sends its cleaned voice to main gets a warning at the node; the shipped patches get none.
@Suite struct PatchLoaderVoiceReferenceTests {
    private func warnings(_ text: String) throws -> [String] {
        try PatchLoader.build(try PatchParser.parse(text: text, names: .engine)).warnings.map {
            "\($0.location?.line ?? 0): \($0.message)"
        }
    }

    @Test func aVoiceThatReachesItsOwnReferenceIsWarnedOf() throws {
        let input = try warnings(
            """
            version: 1
            engine: { sampleRate: 48000, outputs: 1, inputs: 1 }
            nodes:
              - { name: mic, kind: input, params: { voiceProcessing: true } }
              - { name: bus, kind: mixer }
            connections:
              - { from: mic, to: bus }
              - { from: bus, to: main }
            """)
        #expect(input.count == 1 && input[0].hasPrefix("4: 'mic' cancels the engine's output"), "\(input)")
        let processor = try warnings(
            """
            version: 1
            engine: { sampleRate: 48000, outputs: 1, inputs: 1 }
            nodes:
              - { name: mic, kind: input }
              - { name: vp, kind: voiceprocessor, params: { reference: engine, ports: false } }
            connections:
              - { from: mic, to: "vp:0" }
              - { from: vp, to: main }
            """)
        #expect(processor.count == 1 && processor[0].hasPrefix("5: 'vp' cancels"), "\(processor)")
        // Its reference from its ports, or its voice kept out of main: nothing to say.
        let ports = try warnings(
            """
            version: 1
            engine: { sampleRate: 48000, outputs: 1, inputs: 1 }
            nodes:
              - { name: mic, kind: input }
              - { name: vp, kind: voiceprocessor }
            connections:
              - { from: mic, to: "vp:0" }
              - { from: vp, to: main }
            """)
        #expect(ports.isEmpty, "\(ports)")
    }

    @Test(arguments: ["voice.yaml", "gamechat.yaml"])
    func theShippedVoicePatchesHaveNoLoop(_ name: String) throws {
        let path = Fixtures.patches.appendingPathComponent(name).path
        let loaded = try PatchLoader.load(path: path)
        #expect(!loaded.warnings.contains { $0.message.contains("cancels the engine's output") })
    }
}
