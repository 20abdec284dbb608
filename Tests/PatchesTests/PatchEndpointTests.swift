// Tests of PatchEndpoint's "node[:bus]" syntax.

import Patches
import Testing

@Suite struct PatchEndpointTests {
    @Test func nodeWithoutBusHasNoBus() throws {
        #expect(try PatchEndpoint(parsing: "p1") == PatchEndpoint(node: "p1", bus: nil))
    }

    @Test func nodeWithBusReadsTheBus() throws {
        #expect(try PatchEndpoint(parsing: "mix.main-1:10") == PatchEndpoint(node: "mix.main-1", bus: 10))
        #expect(try PatchEndpoint(parsing: "a:007") == PatchEndpoint(node: "a", bus: 7))
    }

    @Test(arguments: ["p1", "p1:0", "sub_2:15"])
    func descriptionReadsBack(text: String) throws {
        #expect(try PatchEndpoint(parsing: text).description == text)
    }

    @Test(arguments: ["", ":3", "p1:", "p1:x", "p1:-1", "p1:+1", "p1: 1", "p1:1:2", "a b", "p1:99999999999999999999"])
    func malformedTextIsRejected(text: String) {
        #expect(throws: PatchEndpoint.SyntaxError.self) { try PatchEndpoint(parsing: text) }
    }
}
