// The engine's name rule, as the engine, OSC and the patch reader apply it: the same names refused, with
// the reader's wording at the name's line and column.
import AudioGraph
import Patches
import SoundstageKit
import Testing

@Suite struct NodeNameRuleTests {
    /// (name, the reader's message)
    static let invalidNameCases: [(String, String)] = [
        ("a b", "invalid node name 'a b': only letters, digits, '_', '-' and '.' are allowed (found a space)"),
        ("a/b", "invalid node name 'a/b': only letters, digits, '_', '-' and '.' are allowed (found '/')"),
        ("née", "invalid node name 'née': only letters, digits, '_', '-' and '.' are allowed (found 'é')"),
        ("", "node name must not be empty"),
        // OSC's own methods beside the named nodes: `/node/list` must stay the list.
        (
            "list",
            "'list' cannot be a node name: OSC has a method of that name (/node/list, /recorder/list…); choose another"
        ),
        (String(repeating: "x", count: 65), "node name 'xxxxxxxxxxxxxxxxxxxx…' is 65 characters long; the limit is 64")
    ]

    @Test(arguments: invalidNameCases)
    func aPatchRefusesInvalidNodeNamesAtTheName(name: String, message: String) {
        #expect(!NodeName.isValid(name))
        #expect {
            try PatchParser.parse(text: "version: 1\nnodes:\n  - name: \"\(name)\"\n    kind: k\n", names: .engine)
        } throws: { error in
            let diagnostics = (error as? PatchParseError)?.diagnostics ?? []
            return diagnostics.map(\.message) == [message]
                && diagnostics.map(\.location) == [Patches.SourceLocation(line: 3, column: 11)]
        }
    }

    @Test func anEndpointsNodeFollowsTheRule() {
        #expect {
            try PatchParser.parse(text: "version: 1\nconnections:\n  - from: \"a b:1\"\n    to: main\n", names: .engine)
        } throws: { error in
            (error as? PatchParseError)?.diagnostics.map(\.message) == [
                "invalid 'from': invalid node name 'a b': only letters, digits, '_', '-' and '.' are allowed "
                    + "(found a space) in endpoint 'a b:1'"
            ]
        }
    }

    @Test func sixtyFourCharactersAreAllowed() throws {
        let name = String(repeating: "a", count: 64)
        let text = "version: 1\nnodes:\n  - { name: \(name), kind: k }\n"
        let document = try PatchParser.parse(text: text, names: .engine)
        #expect(document.nodes.first?.name == name)
        #expect(NodeName.isValid(name) && NodeName.isValid("p1.left_2-b"))
        #expect(!NodeName.isValid("a:b"))
    }

    @Test func theEngineRefusesWithTheRulesMessage() {
        let engine = Engine(configuration: EngineConfiguration())
        let rule = "(letters, digits, '_', '-', '.'; at most 64 characters)"
        #expect(throws: EngineError(.invalidName, "'a b' is not a valid node name \(rule)")) {
            try engine.attach(.player, name: "a b")
        }
        #expect(throws: EngineError(.invalidName, "'a/b' is not a valid buffer name \(rule)")) {
            try engine.addBuffer(SampleBuffer(name: "a/b", channels: [[0]], sampleRate: 48_000))
        }
    }
}
