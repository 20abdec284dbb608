// A save during an interruption writes the session it will resume: the players and audioplayers the
// interruption paused and will play again are written playing, so the save is the one made before the
// interruption (apart from a player that will not resume) and the one made after it ends.
import AudioGraph
import Patches
@testable import SoundstageKit
import Testing

@Suite struct SaveDuringInterruptionTests {
    /// `a` and the audioplayer `c` play and resume; `b` plays but does not resume; `d` does not play.
    private static let patch = """
        version: 1
        engine: { sampleRate: 48000, outputs: 2 }
        buffers:
          - name: tone
            generate: { waveform: sine, frequency: 330, duration: 0.5, amplitude: 0.3 }
        nodes:
          - { name: a, kind: player, params: { buffer: tone, loop: true, playing: true } }
          - { name: b, kind: player, params: { buffer: tone, loop: true, playing: true, resumeAfterInterruption: false } }
          - { name: c, kind: audioplayer, params: { buffer: tone, numberOfLoops: -1, playing: true } }
          - { name: d, kind: player, params: { buffer: tone } }
        connections:
          - { from: a, to: main }
          - { from: b, to: main }
          - { from: c, to: main }
          - { from: d, to: main }

        """

    private func load() throws -> Engine {
        try PatchLoader.build(try PatchParser.parse(text: Self.patch, names: .engine)).engine
    }

    /// The nodes a save of `engine` writes as playing.
    private func playingInSave(_ engine: Engine) -> [String] {
        PatchSnapshot.document(of: engine).document.nodes
            .filter { node in node.params.contains { $0.key == "playing" && $0.value == .bool(true) } }
            .map(\.name)
    }

    @Test func theSaveWritesThePlayersTheInterruptionWillResumeAsPlaying() throws {
        let engine = try load()
        let before = PatchSnapshot.yaml(of: engine)
        #expect(playingInSave(engine) == ["a", "b", "c"])
        #expect(engine.beginInterruption() == ["a", "b", "c"])
        #expect(playingInSave(engine) == ["a", "c"], "b does not resume; the others do")
        let during = PatchSnapshot.yaml(of: engine)
        let expected = before.replacingOccurrences(
            of: "playing: true\n      resumeAfterInterruption: false", with: "resumeAfterInterruption: false")
        #expect(expected != before)
        #expect(during == expected, Comment(rawValue: during))
        #expect(engine.endInterruption(shouldResume: true) == ["a", "c"])
        #expect(PatchSnapshot.yaml(of: engine) == during, "the save during the interruption is the session after it")
    }

    @Test func aPlayerARequestPausesOrStopsDuringTheInterruptionIsWrittenAsTheRequestLeftIt() throws {
        let engine = try load()
        engine.beginInterruption()
        try engine.pause("a")
        try engine.set("c", "playing", to: .bool(false))
        #expect(playingInSave(engine).isEmpty)
        #expect(engine.endInterruption(shouldResume: true).isEmpty)
        #expect(playingInSave(engine).isEmpty)
    }
}
