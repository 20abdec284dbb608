// Control side (pure). A patch as a Graphviz DOT graph: nodes drawn by kind, connections with their
// buses, taps, effects exposed as JACK inserts, and the JACK ports with the connections the patch makes.

import Foundation

/// Draws a patch (`soundstage graph`).
public enum PatchPicture {
    /// The shape and fill of each node kind.
    static func style(kind: String) -> (shape: String, fill: String) {
        switch kind {
        case "player", "audioplayer": ("box", "#cfe8ff")
        case "input": ("invhouse", "#d8f5d0")
        case "mixer": ("trapezium", "#fff2b3")
        case "environment": ("doubleoctagon", "#f3d9ff")
        case "voiceprocessor": ("component", "#ffd9c2")
        case "reverb", "delay", "distortion", "eq", "timepitch", "varispeed": ("box", "#ffe6f0")
        default: ("ellipse", "#eeeeee")
        }
    }

    /// The DOT text for `document` (its file's name as the title, if it has one).
    public static func dot(_ document: PatchDocument, title: String? = nil) -> String {
        var lines = [
            "digraph patch {", "  rankdir=LR;", "  node [fontname=\"Helvetica\", fontsize=11, style=filled];",
            "  edge [fontname=\"Helvetica\", fontsize=9];"
        ]
        if let title { lines.append("  label=\(quote(title)); labelloc=t; fontname=\"Helvetica\";") }
        let outputs = document.engine.outputChannelCount ?? 2
        let inputs = document.engine.inputChannelCount ?? 0
        // The graph's own ends: main (a mixer) into output.
        lines.append("  \(quote("main")) [shape=trapezium, fillcolor=\"#fff2b3\", label=\"main\\nmixer\"];")
        lines.append("  \(quote("output")) [shape=house, fillcolor=\"#dddddd\", label=\"output\\n\(outputs) ch\"];")
        lines.append("  \(quote("main")) -> \(quote("output"));")
        for node in document.nodes where node.name != "main" && node.name != "output" {
            let (shape, fill) = style(kind: node.kind)
            var label = "\(node.name)\\n\(node.kind)"
            if let source = node.params.first(where: { $0.key == "buffer" || $0.key == "file" })?.value.asString,
                !source.isEmpty
            {
                label += "\\n\(escape(source))"
            }
            let insert = node.params.contains { $0.key == "insert" && $0.value.asBool == true }
            if insert { label += "\\n⇄ JACK insert" }
            let secondary = node.params.contains { $0.key == "secondary" && $0.value.asBool == true }
            if secondary { label += "\\nsecondary" }
            lines.append(
                "  \(quote(node.name)) [shape=\(shape), fillcolor=\"\(fill)\", label=\"\(label)\""
                    + (insert ? ", peripheries=2" : "") + "];")
            if insert {
                lines.append(
                    "  \(quote("jack:\(node.name)_in")) [shape=cds, fillcolor=\"#e8e8e8\", "
                        + "label=\"\(node.name)_in_N\"];")
                lines.append(
                    "  \(quote("jack:\(node.name)_out")) [shape=cds, fillcolor=\"#e8e8e8\", "
                        + "label=\"\(node.name)_out_N\"];")
                lines.append("  \(quote("jack:\(node.name)_in")) -> \(quote(node.name)) [style=dashed];")
                lines.append("  \(quote(node.name)) -> \(quote("jack:\(node.name)_out")) [style=dashed];")
            }
        }
        for connection in document.connections {
            let buses = [connection.from.bus.map { "out \($0)" }, connection.to.bus.map { "in \($0)" }]
                .compactMap { $0 }.joined(separator: " → ")
            lines.append(
                "  \(quote(connection.from.node)) -> \(quote(connection.to.node))"
                    + (buses.isEmpty ? ";" : " [label=\(quote(buses))];"))
        }
        for (index, tap) in document.taps.enumerated() {
            let name = "tap:\(index)"
            lines.append("  \(quote(name)) [shape=note, fillcolor=\"#ffffff\", label=\"tap\\nbus \(tap.bus)\"];")
            lines.append("  \(quote(tap.node)) -> \(quote(name)) [style=dotted];")
        }
        for recorder in document.recorders {
            let name = "recorder:\(recorder.name)"
            lines.append(
                "  \(quote(name)) [shape=cylinder, fillcolor=\"#ffffff\", "
                    + "label=\"\(escape(recorder.name))\\n\(escape(recorder.path))\"];")
            lines.append("  \(quote(recorder.node)) -> \(quote(name)) [style=dotted];")
        }
        // JACK: the client's main ports and the connections the patch makes.
        var ports = Set<String>()
        for n in 1...max(1, outputs) where outputs > 0 {
            let port = "out_\(n)"
            ports.insert(port)
            lines.append("  \(quote("jack:\(port)")) [shape=cds, fillcolor=\"#e8e8e8\", label=\"\(port)\"];")
            lines.append("  \(quote("output")) -> \(quote("jack:\(port)")) [style=dashed];")
        }
        for n in 1...max(1, inputs) where inputs > 0 {
            let port = "in_\(n)"
            ports.insert(port)
            lines.append("  \(quote("jack:\(port)")) [shape=cds, fillcolor=\"#e8e8e8\", label=\"\(port)\"];")
            for node in document.nodes where node.kind == "input" {
                lines.append("  \(quote("jack:\(port)")) -> \(quote(node.name)) [style=dashed];")
            }
        }
        let inserts = Set(
            document.nodes.filter { node in node.params.contains { $0.key == "insert" && $0.value.asBool == true } }
                .map(\.name))
        /// The drawn node of a port the patch names: an insert's port is its insert's port node.
        func portNode(_ port: String) -> String {
            if !port.contains(":"), let cut = port.range(of: "_(in|out)_[0-9]+$", options: .regularExpression) {
                let node = String(port[..<cut.lowerBound])
                let direction = port[cut].hasPrefix("_in") ? "in" : "out"
                if inserts.contains(node) { return "\(node)_\(direction)" }
            }
            return port
        }
        for connection in document.jack.connections {
            let ends = [portNode(connection.from), portNode(connection.to)]
            for port in ends where !ports.contains(port) && !inserts.contains(where: { port.hasPrefix($0 + "_") }) {
                ports.insert(port)
                let fill = port.contains(":") ? "#d0d0d0" : "#e8e8e8"
                lines.append("  \(quote("jack:\(port)")) [shape=cds, fillcolor=\"\(fill)\", label=\(quote(port))];")
            }
            lines.append("  \(quote("jack:\(ends[0])")) -> \(quote("jack:\(ends[1])")) [color=\"#555555\"];")
        }
        if document.jack.connectPhysical == true {
            lines.append(
                "  \(quote("jack:system:playback")) [shape=cds, fillcolor=\"#d0d0d0\", label=\"physical playback\"];")
            for n in 1...max(1, outputs) where outputs > 0 {
                lines.append("  \(quote("jack:out_\(n)")) -> \(quote("jack:system:playback")) [color=\"#555555\"];")
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    static func quote(_ text: String) -> String { "\"\(escape(text))\"" }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
