// Control side. Renders the parameter tables of docs/PATCH_FORMAT.md from `ParameterSpec`, so the docs
// are derived from the code (a test checks that the document contains exactly these tables).

public enum ParameterDocumentation {
    /// A Markdown table of every parameter of `kind`.
    public static func markdownTable(for kind: NodeKind) -> String {
        var lines = [
            "| parameter | type | unit | range | default | smoothed | meaning |",
            "| --- | --- | --- | --- | --- | --- | --- |"
        ]
        for spec in kind.parameters {
            let type =
                spec.type.rawValue + (spec.isReadOnly ? " (read-only)" : spec.isCreationOnly ? " (at creation)" : "")
            let range =
                !spec.choices.isEmpty
                ? "a name below, or 0…\(spec.choices.count - 1)"
                : spec.type == .string || spec.type == .bool ? "" : spec.rangeText
            let value: String
            switch spec.defaultValue {
            case .string(let s): value = "\"\(s)\""
            default: value = spec.defaultValue.description
            }
            lines.append(
                "| `\(spec.name)` | \(type) | \(spec.unit) | \(range) | \(value) | \(spec.isSmoothed ? "yes" : "no") | \(spec.summary) |"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// The names of a choice parameter, numbered (for the lists under the tables).
    public static func choiceList(for kind: NodeKind, parameter: String) -> String {
        guard let spec = kind.parameter(named: parameter) else { return "" }
        return spec.choices.enumerated().map { "\($0.offset) `\($0.element)`" }.joined(separator: ", ")
    }
}
