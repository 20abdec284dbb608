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
        #expect(Self.document.contains("| \(code.rawValue) | `\(code)` |"))
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
