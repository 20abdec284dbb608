// Tests of PatchParser on valid input: the full example, JSON, defaults and scalar resolution.

import Patches
import Testing

@Suite struct PatchParserTests {
    @Test func fullExampleParsesToExpectedModel() throws {
        let document = try PatchParser.parse(text: PatchFixtures.fullYAML, names: .unchecked)
        #expect(document.withoutLocations() == PatchFixtures.fullDocument)
    }

    @Test func jsonFormParsesEqualToYAMLForm() throws {
        let fromYAML = try PatchParser.parse(text: PatchFixtures.fullYAML, names: .unchecked)
        let fromJSON = try PatchParser.parse(text: PatchFixtures.fullJSON, names: .unchecked)
        #expect(fromJSON.withoutLocations() == fromYAML.withoutLocations())
    }

    @Test func elementsRecordWhereTheyAreWritten() throws {
        let document = try PatchParser.parse(text: PatchFixtures.fullYAML, names: .unchecked)
        let player = try #require(document.node(named: "p1"))
        #expect(player.location == Patches.SourceLocation(line: 20, column: 5))
        #expect(player.nameLocation == Patches.SourceLocation(line: 20, column: 11))
        #expect(player.kindLocation == Patches.SourceLocation(line: 21, column: 11))
        let loops = try #require(player.parameter("loops"))
        #expect(loops.keyLocation == Patches.SourceLocation(line: 24, column: 7))
        #expect(loops.valueLocation == Patches.SourceLocation(line: 24, column: 14))
        let flow = document.connections[1]
        #expect(flow.location == Patches.SourceLocation(line: 35, column: 5))
        #expect(flow.fromLocation == Patches.SourceLocation(line: 35, column: 13))
        #expect(flow.toLocation == Patches.SourceLocation(line: 35, column: 26))
        let beep = try #require(document.buffer(named: "beep"))
        #expect(beep.sourceLocation == Patches.SourceLocation(line: 14, column: 7))
        guard case .generate(let generator) = beep.source else {
            Issue.record("beep should be generated")
            return
        }
        #expect(generator.fieldLocations["frequency"] == Patches.SourceLocation(line: 15, column: 18))
        #expect(document.engine.fieldLocations["outputs"] == Patches.SourceLocation(line: 4, column: 12))
        #expect(document.jack.connections[0].toLocation == Patches.SourceLocation(line: 41, column: 11))
        #expect(document.jack.connectPhysicalLocation == Patches.SourceLocation(line: 42, column: 20))
    }

    @Test func minimalPatchIsVersionOnly() throws {
        let document = try PatchParser.parse(text: "version: 1\n", names: .unchecked)
        #expect(document == PatchDocument())
    }

    @Test func emptySectionsReadAsAbsent() throws {
        let text = "version: 1\nengine:\nbuffers:\nnodes: []\nconnections: ~\ntaps:\njack:\n"
        #expect(try PatchParser.parse(text: text, names: .unchecked).withoutLocations() == PatchDocument())
    }

    @Test func generatorDefaultsApplyWhenOmitted() throws {
        let text = """
            version: 1
            buffers:
              - name: hiss
                generate: { waveform: noise, duration: 2 }
            """
        let buffer = try #require(try PatchParser.parse(text: text, names: .unchecked).withoutLocations().buffers.first)
        #expect(
            buffer.source == .generate(PatchGenerator(waveform: .noise, duration: 2, amplitude: 0.5, channelCount: 1)))
    }

    @Test func plainScalarsResolveWithYAML12CoreSchema() throws {
        let text = """
            version: 1
            nodes:
              - name: n
                kind: k
                params: { a: yes, b: On, c: TRUE, d: 0x1f, e: 0o17, f: .5, g: -.inf, h: 1e3, i: '12', j: !!str 7, k: 1_000, l: 0x-1 }
            """
        let node = try #require(try PatchParser.parse(text: text, names: .unchecked).nodes.first)
        let values = Dictionary(uniqueKeysWithValues: node.params.map { ($0.key, $0.value) })
        #expect(values["a"] == .string("yes"))
        #expect(values["b"] == .string("On"))
        #expect(values["c"] == .bool(true))
        #expect(values["d"] == .int(31))
        #expect(values["e"] == .int(15))
        #expect(values["f"] == .double(0.5))
        #expect(values["g"] == .double(-.infinity))
        #expect(values["h"] == .double(1000))
        #expect(values["i"] == .string("12"))
        #expect(values["j"] == .string("7"))
        #expect(values["k"] == .string("1_000"))
        #expect(values["l"] == .string("0x-1"))
    }

    @Test func parametersKeepFileOrder() throws {
        let text = "version: 1\nnodes:\n  - { name: n, kind: k, params: { z: 1, a: 2, m: 3 } }\n"
        let node = try #require(try PatchParser.parse(text: text, names: .unchecked).nodes.first)
        #expect(node.params.map(\.key) == ["z", "a", "m"])
    }

    @Test func nameFieldsTakeTheTextAsWritten() throws {
        let text = "version: 1\nnodes:\n  - { name: 01, kind: 2.50 }\n"
        let node = try #require(try PatchParser.parse(text: text, names: .unchecked).nodes.first)
        #expect(node.name == "01")
        #expect(node.kind == "2.50")
    }

    @Test func integralNumbersAreAcceptedForIntegerFields() throws {
        let document = try PatchParser.parse(
            text: #"{"version": 1.0, "engine": {"sampleRate": 44100.0}}"#, names: .unchecked)
        #expect(document.engine.sampleRate == 44100)
    }

    @Test func connectPhysicalAcceptsYAML11Spellings() throws {
        let document = try PatchParser.parse(text: "version: 1\njack: { connectPhysical: off }\n", names: .unchecked)
        #expect(document.jack.connectPhysical == false)
    }

    @Test func relativeFilePathsResolveAgainstThePatchFolder() throws {
        let document = try PatchParser.parse(text: "version: 1\n", path: "patches/demo.yaml", names: .unchecked)
        #expect(document.path == "patches/demo.yaml")
        #expect(document.resolvedPath(forFile: "sounds/a.wav") == "patches/sounds/a.wav")
        #expect(document.resolvedPath(forFile: "/abs/a.wav") == "/abs/a.wav")
        #expect(PatchDocument(path: "demo.yaml").resolvedPath(forFile: "a.wav") == "a.wav")
        #expect(PatchDocument(path: "/demo.yaml").resolvedPath(forFile: "a.wav") == "/a.wav")
    }
}
