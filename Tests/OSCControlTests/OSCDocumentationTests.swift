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

    /// The address rows of the request tables: the first cell when it is one backticked address
    /// (notification rows name their arguments inside the backticks too, and are left out).
    static var documentedAddresses: Set<String> {
        var found: Set<String> = []
        for line in document.split(separator: "\n") where line.hasPrefix("| `/") {
            let cell = line.dropFirst(3).prefix { $0 != "`" }
            if !cell.contains(" ") { found.insert(String(cell)) }
        }
        return found
    }

    /// The route tables themselves, as documented: exact addresses, node tails, recorder verbs.
    static var routedAddresses: Set<String> {
        var addresses = Set(OSCServiceCore.routes.keys)
        for tail in OSCServiceCore.nodeRoutes.keys {
            addresses.insert(tail.hasPrefix("listener/") ? "/node/<env>/\(tail)" : "/node/<name>/\(tail)")
        }
        for verb in OSCServiceCore.recorderRoutes.keys { addresses.insert("/recorder/<name>/\(verb)") }
        return addresses
    }

    @Test func everyRoutedAddressHasARowAndEveryRowIsRouted() {
        let documented = Self.documentedAddresses
        let routed = Self.routedAddresses
        #expect(routed.count > 40)
        for address in routed.sorted() { #expect(documented.contains(address), "\(address) has no row in docs/OSC.md") }
        // Parameters are served by the node fallback: the generic row and the file parameter's own row.
        let parameters: Set<String> = ["/node/<name>/<param>", "/node/<name>/file"]
        for address in documented.subtracting(parameters).sorted() {
            #expect(routed.contains(address), "docs/OSC.md documents \(address), which no route serves")
        }
        #expect(Self.document.contains("**\(OSCServiceOptions.defaultPort)**"))
    }
}
