import AudioGraph
import Foundation
import Testing

@Suite struct DocumentationTests {
    /// docs/PATCH_FORMAT.md must contain, for every node kind, the table generated from its ParameterSpecs.
    @Test func patchFormatDocumentsEveryParameterExactly() throws {
        let doc = try String(contentsOf: Fixtures.root.appendingPathComponent("docs/PATCH_FORMAT.md"), encoding: .utf8)
        for kind in NodeKind.allCases {
            let table = ParameterDocumentation.markdownTable(for: kind)
            #expect(doc.contains(table), "docs/PATCH_FORMAT.md lacks the current table for \(kind.rawValue):\n\(table)")
        }
    }
}
