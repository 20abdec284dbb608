// Tests of PatchEndpoint's "node[:bus]" syntax.

import Patches
import Testing

@Suite struct PatchEndpointTests {
    @Test func nodeWithoutBusHasNoBus() throws {
        #expect(try PatchEndpoint(parsing: "p1", names: .unchecked) == PatchEndpoint(node: "p1", bus: nil))
    }

    @Test func nodeWithBusReadsTheBus() throws {
        #expect(
            try PatchEndpoint(parsing: "mix.main-1:10", names: .unchecked)
                == PatchEndpoint(node: "mix.main-1", bus: 10))
        #expect(try PatchEndpoint(parsing: "a:007", names: .unchecked) == PatchEndpoint(node: "a", bus: 7))
    }

    @Test(arguments: ["p1", "p1:0", "sub_2:15"])
    func descriptionReadsBack(text: String) throws {
        #expect(try PatchEndpoint(parsing: text, names: .unchecked).description == text)
    }

    @Test(arguments: ["", ":3", "p1:", "p1:x", "p1:-1", "p1:+1", "p1: 1", "p1:1:2", "p1:99999999999999999999"])
    func malformedTextIsRejected(text: String) {
        #expect(throws: PatchEndpoint.SyntaxError.self) { try PatchEndpoint(parsing: text, names: .unchecked) }
    }

    /// The node name is checked with the rule the caller passes, before the bus.
    @Test func theNodeNameFollowsTheGivenRule() throws {
        #expect {
            try PatchEndpoint(parsing: "a b:x", names: .noSpaces)
        } throws: { error in
            (error as? PatchEndpoint.SyntaxError)?.message == "node name 'a b' has a space in endpoint 'a b:x'"
        }
        #expect(try PatchEndpoint(parsing: "a b:1", names: .unchecked) == PatchEndpoint(node: "a b", bus: 1))
    }
}
