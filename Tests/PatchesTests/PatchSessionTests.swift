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
        let unknownKey = diagnostics(of: "version: 1\nsession:\n  category: playback\n")
        #expect(unknownKey.count == 1)
        #expect(unknownKey.first?.location == Patches.SourceLocation(line: 3, column: 3))
        #expect(unknownKey.first?.message.contains("pauseOnRouteLoss") == true, "\(unknownKey)")
        let notAMapping = diagnostics(of: "version: 1\nsession: yes\n")
        #expect(notAMapping.first?.location == Patches.SourceLocation(line: 2, column: 10))
    }
}
