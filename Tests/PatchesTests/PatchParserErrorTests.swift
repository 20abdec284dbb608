// Tests of PatchParser on invalid input: each error names the problem at its exact line and column.

import Patches
import Testing

/// The diagnostics `text` produces; records an issue if it parses.
func diagnostics(of text: String, path: String? = nil, names: PatchNameRule = .unchecked) -> [PatchDiagnostic] {
    do {
        _ = try PatchParser.parse(text: text, path: path, names: names)
        Issue.record("expected the patch to be rejected")
        return []
    } catch {
        return error.diagnostics
    }
}

/// Expects exactly one diagnostic, at `line`:`column`, whose message is `message`.
func expectSingleError(
    _ text: String, at line: Int, _ column: Int, _ message: String, names: PatchNameRule = .unchecked,
    sourceLocation: Testing.SourceLocation = #_sourceLocation
) {
    let found = diagnostics(of: text, names: names)
    #expect(found.count == 1, "\(found)", sourceLocation: sourceLocation)
    #expect(found.first?.location == Patches.SourceLocation(line: line, column: column), sourceLocation: sourceLocation)
    #expect(found.first?.message == message, sourceLocation: sourceLocation)
}

@Suite struct PatchParserErrorTests {
    @Test func topLevelMustBeAMapping() {
        expectSingleError(
            "- 1\n- 2\n", at: 1, 1,
            "a patch must be a mapping with 'version: 1' and the sections at the top level, found a list")
    }

    @Test(arguments: ["", "\n\n", "# only a comment\n", "---\n", "~\n"])
    func emptyPatchIsAnError(text: String) {
        expectSingleError(text, at: 1, 1, "the patch is empty; it needs at least 'version: 1'")
    }

    @Test func missingVersionIsReportedAtTheTopMapping() {
        expectSingleError(
            "# header\nnodes: []\n", at: 2, 1,
            "the patch is missing required key 'version' (add 'version: 1' at the top)")
    }

    @Test func unsupportedVersionIsReportedAtItsValue() {
        expectSingleError("version: 2\n", at: 1, 10, "unsupported patch version 2; this format is version 1")
    }

    @Test func versionMustBeAnInteger() {
        expectSingleError("version: \"1\"\n", at: 1, 10, "'version' must be an integer, found a string (\"1\")")
    }

    @Test func unknownKeySuggestsClosestKeyAndListsAllowedKeys() {
        expectSingleError(
            "version: 1\nconections: []\n", at: 2, 1,
            "unknown key 'conections' in the patch (did you mean 'connections'?); "
                + "allowed keys: version, engine, buffers, nodes, connections, taps, recorders, jack, session")
    }

    /// (text, line, column, unknown key, suggested key)
    static let unknownKeyCases: [(String, Int, Int, String, String?)] = [
        ("version: 1\nengine:\n  sampleRat: 48000\n", 3, 3, "sampleRat", "sampleRate"),
        ("version: 1\nbuffers:\n  - name: a\n    file: a.wav\n    frame: 10\n", 5, 5, "frame", "frames"),
        (
            "version: 1\nbuffers:\n  - name: a\n    generate: { waveform: noise, duration: 1, amp: 0.1 }\n", 4, 47,
            "amp", "amplitude"
        ),
        ("version: 1\nnodes:\n  - name: a\n    kind: k\n    param: {}\n", 5, 5, "param", "params"),
        ("version: 1\nconnections:\n  - { from: a, too: b }\n", 3, 16, "too", "to"),
        ("version: 1\ntaps:\n  - { node: a, buss: 1 }\n", 3, 16, "buss", "bus"),
        ("version: 1\njack:\n  connectPhysicl: true\n", 3, 3, "connectPhysicl", "connectPhysical"),
        ("version: 1\njack:\n  connect:\n    - { from: out_1, to: x, via: y }\n", 4, 29, "via", nil)
    ]

    @Test(arguments: unknownKeyCases)
    func unknownKeysAreReportedAtEveryLevel(text: String, line: Int, column: Int, key: String, suggestion: String?)
        throws
    {
        let found = diagnostics(of: text)
        #expect(found.count == 1, "\(found)")
        let diagnostic = try #require(found.first)
        #expect(diagnostic.location == Patches.SourceLocation(line: line, column: column))
        #expect(diagnostic.message.hasPrefix("unknown key '\(key)' in "))
        #expect(diagnostic.message.contains("; allowed keys: "))
        if let suggestion {
            #expect(diagnostic.message.contains("(did you mean '\(suggestion)'?)"))
        } else {
            #expect(!diagnostic.message.contains("did you mean"))
        }
    }

    /// (text, line, column, message)
    static let wrongTypeCases: [(String, Int, Int, String)] = [
        ("version: 1\nnodes: {}\n", 2, 8, "'nodes' must be a list, found a mapping"),
        ("version: 1\nengine: [1]\n", 2, 9, "'engine' must be a mapping, found a list"),
        ("version: 1\nnodes:\n  - name: a\n    kind: [x]\n", 4, 11, "'kind' must be a string, found a list"),
        ("version: 1\nnodes:\n  - name: a\n    kind:\n", 4, 10, "'kind' must be a string, found nothing (null)"),
        ("version: 1\nengine:\n  outputs: two\n", 3, 12, "'outputs' must be an integer, found a string (\"two\")"),
        ("version: 1\nengine:\n  outputs: 2.5\n", 3, 12, "'outputs' must be an integer, found a number (2.5)"),
        (
            "version: 1\nbuffers:\n  - name: a\n    generate:\n      waveform: sine\n      frequency: high\n      duration: 1\n",
            6, 18, "'frequency' must be a number, found a string (\"high\")"
        ),
        (
            "version: 1\nnodes:\n  - a\n", 3, 5,
            "each entry of 'nodes' must be a mapping (a node), found a string (\"a\")"
        ),
        (
            "version: 1\nnodes:\n  - name: a\n    kind: k\n    params: [1]\n", 5, 13,
            "'params' must be a mapping, found a list"
        ),
        (
            "version: 1\njack:\n  connectPhysical: 1\n", 3, 20,
            "'connectPhysical' must be true or false, found an integer (1)"
        ),
        (
            "version: 1\nbuffers:\n  - name: a\n    generate: 5\n", 4, 15,
            "'generate' must be a mapping, found an integer (5)"
        ),
        (
            "version: 1\nnodes:\n  - name: a\n    kind: k\n    params:\n      gain: {x: 1}\n", 6, 13,
            "parameter 'a.gain' must be a number, string, boolean or a list of them, found a mapping"
        ),
        (
            "version: 1\nnodes:\n  - name: a\n    kind: k\n    params:\n      gains: [1, [2]]\n", 6, 18,
            "list in parameter 'a.gains' may hold only numbers, strings and booleans, found a list"
        ),
        (
            "version: 1\nnodes:\n  - name: a\n    kind: k\n    params:\n      gain:\n", 6, 12,
            "parameter 'a.gain' has no value"
        )
    ]

    @Test(arguments: wrongTypeCases)
    func wrongTypesNameTheKey(text: String, line: Int, column: Int, message: String) {
        expectSingleError(text, at: line, column, message)
    }

    @Test func missingRequiredKeysAreReportedAtTheirMapping() {
        let found = diagnostics(of: "version: 1\nnodes:\n  - kind: k\n  - name: b\nconnections:\n  - from: a\n")
        #expect(
            found.map(\.location) == [
                Patches.SourceLocation(line: 3, column: 5), Patches.SourceLocation(line: 4, column: 5),
                Patches.SourceLocation(line: 6, column: 5)
            ])
        #expect(
            found.map(\.message) == [
                "node is missing required key 'name'",
                "node 'b' is missing required key 'kind'",
                "connection is missing required key 'to'"
            ])
    }

    @Test func misspeltRequiredKeyIsReportedOnce() {
        expectSingleError(
            "version: 1\nnodes:\n  - name: a\n    knd: k\n", at: 4, 5,
            "unknown key 'knd' in node (did you mean 'kind'?); allowed keys: name, kind, params")
    }

    @Test func duplicateNodeNamesPointAtTheSecondAndNameTheFirstLine() {
        let text = """
            version: 1
            nodes:
              - name: p1
                kind: player
              - name: p1
                kind: mixer
            """
        expectSingleError(text, at: 5, 11, "duplicate node name 'p1' (first defined at line 3)")
    }

    @Test func duplicateBufferNamesPointAtTheSecondAndNameTheFirstLine() {
        let text = """
            version: 1
            buffers:
              - { name: tone, file: a.wav }
              - name: other
                file: b.wav
              - name: tone
                file: c.wav
            """
        expectSingleError(text, at: 6, 11, "duplicate buffer name 'tone' (first defined at line 3)")
    }

    /// The reader asks the rule it was given about every name, reports its answer where the name is
    /// written, and leaves the entry out (the engine's rule and wording: SoundstageKitTests,
    /// `PatchNameRuleTests`).
    @Test func theNameRuleIsAskedAboutEveryNameWhereItIsWritten() {
        let text = """
            version: 1
            buffers:
              - { name: "b 1", generate: { waveform: sine, frequency: 440, duration: 1 } }
            nodes:
              - { name: "n 1", kind: player }
            connections:
              - { from: "p 1:0", to: main }
            taps:
              - { node: "t 1" }
            recorders:
              - { name: "r 1", node: "m 1", path: out.wav }
            """
        let found = diagnostics(of: text, names: .noSpaces)
        #expect(
            found.map(\.message) == [
                "buffer name 'b 1' has a space", "node name 'n 1' has a space",
                "invalid 'from': node name 'p 1' has a space in endpoint 'p 1:0'", "node name 't 1' has a space",
                "recorder name 'r 1' has a space", "node name 'm 1' has a space"
            ])
        #expect(
            found.map(\.location)
                == [(3, 13), (5, 13), (7, 13), (9, 13), (11, 13), (11, 26)].map {
                    Patches.SourceLocation(line: $0.0, column: $0.1)
                })
        #expect(throws: Never.self) { try PatchParser.parse(text: text, names: .unchecked) }
    }

    /// (endpoint text, message after "invalid 'from': ")
    static let malformedEndpointCases: [(String, String)] = [
        ("p1:x", "bus 'x' in endpoint 'p1:x' must be an integer >= 0"),
        ("", "endpoint is empty; expected \"node\" or \"node:bus\""),
        (":3", "endpoint ':3' has no node name before ':'"),
        ("p1:-1", "bus '-1' in endpoint 'p1:-1' must be an integer >= 0"),
        ("p1:", "endpoint 'p1:' has no bus number after ':'")
    ]

    @Test(arguments: malformedEndpointCases)
    func malformedEndpointsAreRejectedAtTheValue(endpoint: String, message: String) {
        expectSingleError(
            "version: 1\nconnections:\n  - from: \"\(endpoint)\"\n    to: main\n", at: 3, 11,
            "invalid 'from': \(message)")
    }

    @Test func malformedDestinationIsReportedAtItsFlowValue() {
        expectSingleError(
            "version: 1\nconnections:\n  - { from: p1, to: \"p1:x\" }\n", at: 3, 21,
            "invalid 'to': bus 'x' in endpoint 'p1:x' must be an integer >= 0")
    }

    @Test func bufferWithBothFileAndGenerateIsReportedAtGenerate() {
        let text = """
            version: 1
            buffers:
              - name: a
                file: a.wav
                generate: { waveform: noise, duration: 1 }
            """
        expectSingleError(text, at: 5, 5, "buffer 'a' has both 'file' and 'generate'; give only one")
    }

    @Test func bufferWithNeitherFileNorGenerateIsReportedAtTheBuffer() {
        expectSingleError(
            "version: 1\nbuffers:\n  - name: a\n    start: 0\n", at: 3, 5,
            "buffer 'a' needs either 'file' (an audio file) or 'generate' (a synthetic signal)")
    }

    @Test func startAndFramesApplyOnlyToFileBuffers() {
        expectSingleError(
            "version: 1\nbuffers:\n  - name: a\n    generate: { waveform: click, duration: 1 }\n    frames: 10\n",
            at: 5, 5, "'frames' applies only to 'file' buffers")
    }

    @Test func fileRegionMustBeInRange() {
        let found = diagnostics(of: "version: 1\nbuffers:\n  - { name: a, file: a.wav, start: -1, frames: 0 }\n")
        #expect(
            found.map(\.message) == [
                "'start' must be at least 0, found -1", "'frames' must be at least 1, found 0"
            ])
        #expect(found.map { $0.location?.column } == [36, 48])
    }

    /// A generator with one line per field, so each field's value column is fixed.
    static func generator(replacing key: String, with value: String) -> String {
        let fields = [
            ("waveform", "sine"), ("frequency", "440"), ("duration", "1"), ("amplitude", "0.5"), ("channels", "1")
        ]
        let lines = fields.map { "      \($0.0): \($0.0 == key ? value : $0.1)" }
        return "version: 1\nbuffers:\n  - name: g\n    generate:\n" + lines.joined(separator: "\n") + "\n"
    }

    /// (key, value, line, column, message)
    static let generatorRangeCases: [(String, String, Int, Int, String)] = [
        ("frequency", "0", 6, 18, "'frequency' must be greater than 0 Hz, found 0"),
        ("frequency", "-5", 6, 18, "'frequency' must be greater than 0 Hz, found -5"),
        ("frequency", ".inf", 6, 18, "'frequency' must be greater than 0 Hz, found .inf"),
        ("duration", "0", 7, 17, "'duration' must be greater than 0 and at most 3600 seconds, found 0"),
        ("duration", "4000", 7, 17, "'duration' must be greater than 0 and at most 3600 seconds, found 4000"),
        ("amplitude", "1.5", 8, 18, "'amplitude' must be between 0 and 1, found 1.5"),
        ("amplitude", "-0.1", 8, 18, "'amplitude' must be between 0 and 1, found -0.1"),
        ("channels", "0", 9, 17, "'channels' must be between 1 and 64, found 0"),
        ("channels", "65", 9, 17, "'channels' must be between 1 and 64, found 65"),
        (
            "waveform", "sinus", 5, 17,
            "unknown waveform 'sinus' (did you mean 'sine'?); allowed: sine, square, saw, triangle, noise, silence, click"
        )
    ]

    @Test(arguments: generatorRangeCases)
    func generatorFieldsOutOfRangeAreRejected(key: String, value: String, line: Int, column: Int, message: String) {
        expectSingleError(Self.generator(replacing: key, with: value), at: line, column, message)
    }

    @Test func frequencyDoesNotApplyToNoise() {
        expectSingleError(
            Self.generator(replacing: "waveform", with: "noise"), at: 6, 7,
            "'frequency' does not apply to waveform 'noise'")
    }

    @Test func periodicWaveformNeedsFrequency() {
        let text = "version: 1\nbuffers:\n  - name: g\n    generate:\n      waveform: square\n      duration: 1\n"
        expectSingleError(text, at: 5, 7, "waveform 'square' needs 'frequency' (in Hz, greater than 0)")
    }

    /// A full engine section with one field replaced.
    static func engine(replacing key: String, with value: String) -> String {
        let fields = [("sampleRate", "48000"), ("outputs", "2"), ("inputs", "2"), ("blockFrames", "64")]
        let lines = fields.map { "  \($0.0): \($0.0 == key ? value : $0.1)" }
        return "version: 1\nengine:\n" + lines.joined(separator: "\n") + "\n"
    }

    /// (key, value, line, column, message)
    static let engineRangeCases: [(String, String, Int, Int, String)] = [
        ("sampleRate", "100", 3, 15, "'sampleRate' must be between 8000 and 384000, found 100"),
        ("outputs", "0", 4, 12, "'outputs' must be between 1 and 64, found 0"),
        ("outputs", "65", 4, 12, "'outputs' must be between 1 and 64, found 65"),
        ("inputs", "-1", 5, 11, "'inputs' must be between 0 and 64, found -1"),
        ("blockFrames", "0", 6, 16, "'blockFrames' must be between 1 and 4096, found 0"),
        ("blockFrames", "4097", 6, 16, "'blockFrames' must be between 1 and 4096, found 4097")
    ]

    @Test(arguments: engineRangeCases)
    func engineFieldsOutOfRangeAreRejected(key: String, value: String, line: Int, column: Int, message: String) {
        expectSingleError(Self.engine(replacing: key, with: value), at: line, column, message)
    }

    @Test func inputsMayBeZero() throws {
        let noInputs = try PatchParser.parse(text: Self.engine(replacing: "inputs", with: "0"), names: .unchecked)
        #expect(noInputs.engine.inputChannelCount == 0)
    }

    @Test func duplicateTopLevelKeyIsReportedAtTheSecond() {
        expectSingleError("version: 1\nnodes: []\nnodes: []\n", at: 3, 1, "duplicate key 'nodes' (first at line 2)")
    }

    @Test func duplicateNestedKeyIsReportedAtTheSecond() {
        expectSingleError(
            "version: 1\nnodes:\n  - name: a\n    kind: k\n    kind: j\n", at: 5, 5,
            "duplicate key 'kind' (first at line 4)")
    }

    @Test func duplicateParameterIsReportedAtTheSecond() {
        expectSingleError(
            "version: 1\nnodes:\n  - name: a\n    kind: k\n    params:\n      gain: 1\n      gain: 2\n", at: 7, 7,
            "duplicate parameter 'gain' (first at line 6)")
    }

    @Test func everyRepeatedKeyIsReportedInEveryMapping() {
        let text = """
            version: 1
            nodes:
              - name: a
                kind: k
                params:
                  gain: 1
                  "gain": 2
                  gain: 3
              - name: b
                name: c
                kind: k
            """
        let found = diagnostics(of: text)
        #expect(found.map { "\($0.location!)" } == ["7:7", "8:7", "10:5"])
        #expect(
            found.map(\.message) == [
                "duplicate parameter 'gain' (first at line 6)", "duplicate parameter 'gain' (first at line 6)",
                "duplicate key 'name' (first at line 9)"
            ])
    }

    @Test func duplicateJSONKeyOnOneLineNamesTheColumn() {
        expectSingleError(
            #"{"version": 1, "version": 1}"#, at: 1, 16, "duplicate key 'version' (first at line 1, column 2)")
    }

    @Test func yamlSyntaxErrorCarriesLibyamlPosition() {
        expectSingleError(
            "version: 1\nnodes: [a, b\nconnections: []\n", at: 3, 12,
            "YAML syntax error: did not find expected ',' or ']' "
                + "(while parsing a flow sequence that started at line 2, column 8)")
    }

    @Test func tabIndentationIsExplained() {
        expectSingleError(
            "version: 1\nengine:\n\toutputs: 2\n", at: 3, 1,
            "YAML syntax error: found character that cannot start any token; YAML cannot be indented with tabs, use spaces"
        )
    }

    @Test func secondYAMLDocumentIsAnError() {
        expectSingleError(
            "version: 1\n---\nversion: 1\n", at: 2, 1,
            "a patch file holds a single YAML document, but a second one starts here")
    }

    @Test func controlCharacterIsReportedWhereItIs() {
        expectSingleError("version: 1\nx: a\u{1}\n", at: 2, 5, "invalid YAML text: control characters are not allowed")
    }

    @Test func crlfLineEndingsCountAsOneLineBreak() {
        expectSingleError(
            "version: 1\r\nengine:\r\n  outputs: 0\r\n", at: 3, 12, "'outputs' must be between 1 and 64, found 0")
    }

    @Test func multipleErrorsAreAllReportedInFileOrder() {
        let text = """
            version: 3
            engine:
              outputs: 0
            nodes:
              - name: "bad name"
                kind: player
              - name: ok
                kynd: mixer
            connections:
              - { from: "ok:x", to: main }
            jack:
              connectPhysical: perhaps
            """
        let found = diagnostics(of: text, names: .noSpaces)
        #expect(found.map { "\($0.location!)" } == ["1:10", "3:12", "5:11", "8:5", "10:13", "12:20"])
        #expect(found[2].message == "node name 'bad name' has a space")
        #expect(found[3].message.hasPrefix("unknown key 'kynd' in node (did you mean 'kind'?)"))
    }

    @Test func diagnosticsPrintLikeACompiler() {
        let found = diagnostics(of: "version: 1\nbuffers:\n  - name: tone\n", path: "file.yaml")
        #expect(
            found.map(\.description) == [
                "file.yaml:3:5: error: buffer 'tone' needs either 'file' (an audio file) or 'generate' (a synthetic signal)"
            ])
    }
}
