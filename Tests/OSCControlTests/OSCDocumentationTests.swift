// docs/OSC.md stays in step with the code: parameter tables, error codes, addresses, default port.
import AudioGraph
import Foundation
@testable import OSCControl
import Testing

@Suite struct OSCDocumentationTests {
    static let document: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/OSC.md"), encoding: .utf8)) ?? ""
    }()

    @Test(arguments: NodeKind.allCases)
    func parameterTablesMatchTheEngine(kind: NodeKind) {
        #expect(Self.document.contains(ParameterDocumentation.markdownTable(for: kind)))
    }

    @Test(arguments: OSCErrorCode.allCases)
    func everyErrorCodeIsDocumented(code: OSCErrorCode) {
        #expect(Self.document.contains("| \(code.rawValue) | `\(code)` | \(code.meaning) |"))
    }

    /// The engine's codes are OSC codes with the same numbers, below the OSC layer's; no two codes share a
    /// number, and the table has no row for a code that does not exist.
    @Test func errorCodesAreTheEngineCodesThenTheLayerCodes() {
        for code in EngineError.Code.allCases {
            #expect(OSCErrorCode(code).rawValue == Int32(code.rawValue))
            #expect((10..<60).contains(code.rawValue), "\(code)")
        }
        for code in OSCErrorCode.Layer.allCases { #expect(code.rawValue >= 60, "\(code)") }
        let numbers = OSCErrorCode.allCases.map(\.rawValue)
        #expect(Set(numbers).count == numbers.count)
        let rows = Self.document.components(separatedBy: "\n").filter {
            $0.range(of: #"^\| [0-9]+ \| `"#, options: .regularExpression) != nil
        }
        #expect(rows.count == OSCErrorCode.allCases.count)
    }

    /// `/node/new`'s list of kinds is every kind but `output` (the engine has exactly one), in `NodeKind` order.
    @Test func nodeNewListsEveryCreatableKind() throws {
        let row = try #require(Self.document.components(separatedBy: "\n").first { $0.hasPrefix("| `/node/new` |") })
        let list = try #require(row.range(of: #"\(kinds: [^;)]*"#, options: .regularExpression).map { String(row[$0]) })
        let documented = list.dropFirst("(kinds: ".count).components(separatedBy: ", ")
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
        #expect(documented == NodeKind.allCases.filter { $0 != .output }.map(\.rawValue))
    }

    @Test func everyAddressHasARow() {
        let addresses = [
            "/ping", "/status", "/version", "/quit", "/sync", "/node/new", "/node/free", "/node/list",
            "/node/<name>/<param>", "/node/<name>/params", "/node/<name>/play", "/node/<name>/pause",
            "/node/<name>/stop", "/node/<name>/schedule/buffer", "/node/<name>/schedule/file", "/graph/connect",
            "/graph/disconnect", "/graph/list", "/buffer/load", "/buffer/free", "/buffer/list", "/patch/load",
            "/patch/save", "/notify", "/renew", "/meters",
        ]
        for address in addresses { #expect(Self.document.contains("| `\(address)` |"), "\(address)") }
        #expect(Self.document.contains("**\(OSCServiceOptions.defaultPort)**"))
    }
}
