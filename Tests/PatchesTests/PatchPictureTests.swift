// `soundstage graph`'s drawing: every node with its kind's shape, each connection with its buses, taps
// and recorders, an insert's JACK ports, the client's ports and the JACK connections the patch makes.
import Foundation
import Patches
import Testing

@Suite struct PatchPictureTests {
    private static let text = """
        version: 1
        engine: { outputs: 2, inputs: 1 }
        nodes:
          - { name: mic, kind: input }
          - { name: p, kind: player, params: { buffer: hiss } }
          - { name: fx, kind: reverb, params: { insert: true } }
          - { name: bus, kind: mixer }
          - { name: room, kind: environment }
        connections:
          - { from: p, to: fx }
          - { from: fx, to: bus:1 }
          - { from: mic, to: main }
          - { from: bus, to: main }
        taps:
          - { node: bus, bus: 0 }
        recorders:
          - { name: take, node: main, path: take.wav }
        jack:
          connect:
            - { from: system:capture_1, to: fx_in_1 }
            - { from: out_1, to: system:playback_1 }

        """

    @Test func everyPartOfThePatchIsDrawn() throws {
        let document = try PatchParser.parse(text: Self.text, names: .unchecked)
        let dot = PatchPicture.dot(document, title: "t.yaml")
        #expect(dot.hasPrefix("digraph patch {") && dot.hasSuffix("}\n"))
        // Nodes by kind.
        #expect(dot.contains("\"p\" [shape=box, fillcolor=\"#cfe8ff\", label=\"p\\nplayer\\nhiss\"]"))
        #expect(dot.contains("\"mic\" [shape=invhouse"))
        #expect(dot.contains("\"bus\" [shape=trapezium"))
        #expect(dot.contains("\"room\" [shape=doubleoctagon"))
        #expect(
            dot.contains(
                "\"fx\" [shape=box, fillcolor=\"#ffe6f0\", label=\"fx\\nreverb\\n⇄ JACK insert\", peripheries=2]"))
        // Connections, with the bus where one is named.
        #expect(dot.contains("\"p\" -> \"fx\";"))
        #expect(dot.contains("\"fx\" -> \"bus\" [label=\"in 1\"];"))
        #expect(dot.contains("\"main\" -> \"output\";"))
        // A tap and a recorder.
        #expect(dot.contains("\"tap:0\" [shape=note") && dot.contains("\"bus\" -> \"tap:0\" [style=dotted];"))
        #expect(dot.contains("\"recorder:take\" [shape=cylinder") && dot.contains("\"main\" -> \"recorder:take\""))
        // JACK: the client's ports, the insert's ports, and the connections the patch makes.
        #expect(dot.contains("\"output\" -> \"jack:out_2\" [style=dashed];"))
        #expect(dot.contains("\"jack:in_1\" -> \"mic\" [style=dashed];"))
        #expect(dot.contains("\"jack:system:capture_1\" -> \"jack:fx_in\""))
        #expect(dot.contains("\"jack:out_1\" -> \"jack:system:playback_1\""))
        // Every edge joins nodes that are declared.
        let declared = Set(
            dot.split(separator: "\n").compactMap { line -> String? in
                let t = line.trimmingCharacters(in: .whitespaces)
                guard t.hasPrefix("\""), t.contains(" ["), !t.contains(" -> ") else { return nil }
                return String(t.split(separator: " ")[0])
            })
        for line in dot.split(separator: "\n") where line.contains(" -> ") {
            let ends = line.trimmingCharacters(in: .whitespaces).components(separatedBy: " -> ")
            let from = ends[0]
            let to = String(ends[1].split(separator: " ")[0]).trimmingCharacters(in: CharacterSet(charactersIn: ";"))
            #expect(declared.contains(from) && declared.contains(to), "undeclared end in \(line)")
        }
    }

    @Test func quotesAndBackslashesInNamesAreEscaped() throws {
        var document = try PatchParser.parse(text: "version: 1\n", names: .unchecked)
        document.recorders = []
        let dot = PatchPicture.dot(document, title: "a \"quoted\" \\ name.yaml")
        #expect(dot.contains("label=\"a \\\"quoted\\\" \\\\ name.yaml\""))
    }

    @Test func everyPatchOfTheProjectHasItsPictureInTheDocs() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let patches = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("patches").path)
            .filter { $0.hasSuffix(".yaml") }
        let page = try String(contentsOf: root.appendingPathComponent("docs/PATCHES.md"), encoding: .utf8)
        for patch in patches {
            let name = String(patch.dropLast(5))
            let picture = root.appendingPathComponent("docs/pictures/\(name).svg").path
            #expect(FileManager.default.fileExists(atPath: picture), "no picture of \(patch): scripts/draw-patches.sh")
            #expect(page.contains("(pictures/\(name).svg)"), "docs/PATCHES.md does not show \(patch)")
            let render = root.appendingPathComponent("docs/pictures/\(name)-render.png").path
            #expect(FileManager.default.fileExists(atPath: render), "no render of \(patch): scripts/draw-patches.sh")
            #expect(page.contains("(pictures/\(name)-render.png)"), "docs/PATCHES.md does not show \(patch)'s render")
        }
    }
}
