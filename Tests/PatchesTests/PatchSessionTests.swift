// The `session:` section: read, written back, and refused with its line and column when wrong.

import Patches
import Testing

@Suite struct PatchSessionTests {
    @Test func sessionSectionIsReadAndWrittenBack() throws {
        let document = try PatchParser.parse(
            text: "version: 1\nsession:\n  pauseOnRouteLoss: true\n", names: .unchecked)
        #expect(document.session.pauseOnRouteLoss == true)
        #expect(document.session.location == Patches.SourceLocation(line: 3, column: 3))
        let written = PatchWriter.yaml(document)
        #expect(written.contains("session:\n  pauseOnRouteLoss: true"))
        let again = try PatchParser.parse(text: written, names: .unchecked)
        #expect(again.withoutLocations().session == document.withoutLocations().session)
        #expect(try PatchParser.parse(text: "version: 1\n", names: .unchecked).session.isEmpty)
    }

    @Test func badSessionValuesAreRefusedAtTheirPlace() {
        let wrongType = diagnostics(of: "version: 1\nsession:\n  pauseOnRouteLoss: often\n")
        #expect(wrongType.count == 1)
        #expect(wrongType.first?.location == Patches.SourceLocation(line: 3, column: 21))
        #expect(wrongType.first?.message.contains("pauseOnRouteLoss") == true, "\(wrongType)")
        let unknownKey = diagnostics(of: "version: 1\nsession:\n  categroy: playback\n")
        #expect(unknownKey.count == 1)
        #expect(unknownKey.first?.location == Patches.SourceLocation(line: 3, column: 3))
        #expect(unknownKey.first?.message.contains("category") == true, "\(unknownKey)")
        let category = diagnostics(of: "version: 1\nsession:\n  category: playbak\n")
        #expect(category.count == 1)
        #expect(category.first?.location == Patches.SourceLocation(line: 3, column: 13))
        #expect(category.first?.message.contains("did you mean 'playback'") == true, "\(category)")
        let mode = diagnostics(of: "version: 1\nsession:\n  mode: karaoke\n")
        #expect(mode.first?.message.contains("spokenAudio") == true, "\(mode)")
        // An option the category does not take (mixWithOthers is for playback, playAndRecord, multiRoute).
        let option = diagnostics(of: "version: 1\nsession:\n  category: record\n  mixWithOthers: true\n")
        #expect(option.count == 1)
        #expect(option.first?.location == Patches.SourceLocation(line: 4, column: 3))
        #expect(option.first?.message.contains("does not apply to the record category") == true, "\(option)")
        let duck = diagnostics(of: "version: 1\nsession:\n  duckLevel: 6\n")
        #expect(duck.first?.location == Patches.SourceLocation(line: 3, column: 14))
        let notAMapping = diagnostics(of: "version: 1\nsession: yes\n")
        #expect(notAMapping.first?.location == Patches.SourceLocation(line: 2, column: 10))
    }

    @Test func sharingSettingsAreReadAndWrittenBack() throws {
        let text = """
            version: 1
            session:
              category: ambient
              mode: spokenAudio
              duckOthers: true
              duckLevel: -20
              active: true

            """
        let document = try PatchParser.parse(text: text, names: .unchecked)
        #expect(document.session.category == "ambient")
        #expect(document.session.mode == "spokenAudio")
        #expect(document.session.duckOthers == true)
        #expect(document.session.duckLevel == -20)
        #expect(document.session.active == true)
        let again = try PatchParser.parse(text: PatchWriter.yaml(document), names: .unchecked)
        #expect(again.withoutLocations().session == document.withoutLocations().session)
    }

    @Test func nowPlayingMustNameAPlayerOfThePatch() throws {
        let ok = try PatchParser.parse(
            text: "version: 1\nnodes:\n  - { name: deck, kind: audioplayer }\nsession:\n  nowPlaying: deck\n",
            names: .unchecked)
        #expect(ok.session.nowPlaying == "deck")
        #expect(PatchWriter.yaml(ok).contains("  nowPlaying: deck"))
        let ghost = diagnostics(of: "version: 1\nsession:\n  nowPlaying: ghost\n")
        #expect(ghost.map(\.message) == ["session nowPlaying names no node 'ghost'"])
        #expect(ghost.first?.location == Patches.SourceLocation(line: 3, column: 15))
        let mixer = diagnostics(of: "version: 1\nnodes:\n  - { name: bus, kind: mixer }\nsession:\n  nowPlaying: bus\n")
        #expect(mixer.map(\.message) == ["session nowPlaying 'bus' is a mixer; it must name a player or audioplayer"])
    }
}
