// A patch load's phases one at a time: each reports its own problems, with their places, and leaves
// the engine as far as it got.
import AudioGraph
import Patches
@testable import SoundstageKit
import Testing

@Suite struct PatchBuildPhaseTests {
    static let text = """
        version: 1
        engine: { sampleRate: 24000, outputs: 1 }
        buffers:
          - name: tone
            generate: { waveform: sine, frequency: 440, duration: 0.1 }
          - name: tooHigh
            generate: { waveform: sine, frequency: 12000, duration: 0.1 }
        nodes:
          - name: p
            kind: player
            params: { buffer: tone, volum: 0.5 }
          - name: q
            kind: player
            params: { buffer: tone }
        connections:
          - { from: p, to: main }
          - { from: q, to: nowhere }
          - { from: p, to: elsewhere }
        recorders:
          - { name: r, node: q, path: take.xyz }
        """

    @Test func eachPhaseReportsItsOwnProblemsInFileOrder() throws {
        var build = PatchBuild(document: try PatchParser.parse(text: Self.text, names: .engine), overrides: .init())
        #expect(build.engine.configuration.sampleRate == 24_000)
        #expect(build.engine.configuration.outputChannelCount == 1)

        build.loadBuffers()
        #expect(build.engine.buffers().map(\.name) == ["tone"])
        #expect(build.diagnostics.map(\.location?.line) == [7])
        #expect(build.diagnostics.last?.message.contains("Nyquist") == true)

        build.attachNodes()
        #expect(build.knownNodes == ["main", "output", "q"], "p has a misspelt parameter and is not attached")
        #expect(build.diagnostics.count == 2)
        #expect(build.diagnostics.last?.message.contains("did you mean 'volume'") == true)
        #expect(build.diagnostics.last?.location?.line == 11)

        build.connectNodes()
        // p → main is not reported again (p was declared); q → nowhere is, and p → elsewhere for its
        // other end (p failing once hid it).
        #expect(build.diagnostics.count == 4)
        #expect(
            build.diagnostics.suffix(2).map(\.message) == [
                "connection refers to 'nowhere', which is not a node in this patch",
                "connection refers to 'elsewhere', which is not a node in this patch"
            ])
        #expect(build.diagnostics.last?.location?.line == 18)
        #expect(build.engine.connections().count == 1, "only main → output")

        build.checkTaps()
        #expect(build.diagnostics.count == 4)
        build.checkRecorders()
        #expect(build.diagnostics.count == 5)
        #expect(build.diagnostics.last?.message.contains("cannot tell a recording format from 'take.xyz'") == true)

        let error = #expect(throws: PatchLoadError.self) { _ = try build.finish() }
        #expect(error?.diagnostics.count == 5)
    }
}
