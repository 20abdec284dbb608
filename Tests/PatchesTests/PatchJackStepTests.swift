// How a reload follows an edit of `jack.connect`: what is added is made first, then what was removed is
// undone, so a moved connection is never missing in between.
import Patches
import Testing

@Suite struct PatchJackStepTests {
    private func settings(_ pairs: [(String, String)]) -> PatchJackSettings {
        PatchJackSettings(connections: pairs.map { PatchJackConnection(from: $0.0, to: $0.1) })
    }

    @Test func aMovedOutputIsConnectedBeforeItsOldConnectionGoes() {
        let before = settings([("out_1", "system:playback_1"), ("out_2", "system:playback_2")])
        let after = settings([("out_2", "system:playback_2"), ("out_1", "system:playback_3")])
        #expect(
            before.steps(to: after) == [
                .connect(from: "out_1", to: "system:playback_3"), .disconnect(from: "out_1", to: "system:playback_1")
            ])
    }

    @Test func additionsKeepTheFilesOrderAndAnUnchangedListDoesNothing() {
        let before = settings([("a", "x:1"), ("b", "x:2")])
        let after = settings([("c", "x:3"), ("b", "x:2"), ("d", "x:4")])
        #expect(
            before.steps(to: after) == [
                .connect(from: "c", to: "x:3"), .connect(from: "d", to: "x:4"), .disconnect(from: "a", to: "x:1")
            ])
        #expect(after.steps(to: after).isEmpty)
        #expect(settings([]).steps(to: settings([])).isEmpty)
        #expect(
            before.steps(to: settings([])) == [.disconnect(from: "a", to: "x:1"), .disconnect(from: "b", to: "x:2")])
    }
}
