// Control side. Walks a composed Yams node tree, checks the patch schema and collects diagnostics.
// Section readers are in PatchSchemaReader+Sections.swift.

import Yams

/// Reads a YAML node tree into a ``PatchDocument``, collecting every schema error it can find.
///
/// It keeps going after an error: a bad entry is left out of the document, and its siblings are
/// still read, so one pass reports as many problems as possible. The document it builds is only
/// meaningful when ``diagnostics`` is empty.
///
/// Only the `scalar`, `mapping` and `sequence` accessors of `Node` are used, so the code compiles
/// against Yams 5 (three cases) and Yams 6 (which adds `alias`).
struct PatchSchemaReader {
    /// One `key: value` entry of a mapping, with where the key and value start.
    struct Entry {
        let key: String
        let keyLocation: SourceLocation?
        let value: Node
        var valueLocation: SourceLocation? { PatchSchemaReader.location(of: value) }
        /// Whether the value is a YAML null (`~`, `null`, or nothing after the colon).
        var isNull: Bool { PatchSchemaReader.isNull(value) }
    }

    /// The recognised entries of one mapping, first occurrence of each key.
    struct Fields {
        /// Where the mapping starts (its first key in block style, its `{` in flow style).
        let location: SourceLocation?
        var entries: [String: Entry] = [:]
        /// Allowed keys suggested for a misspelt key; their absence is not reported again.
        var suggested: Set<String> = []

        subscript(key: String) -> Entry? { entries[key] }

        /// Value locations of the entries present, keyed by key, for `fieldLocations`.
        var valueLocations: [String: SourceLocation] {
            entries.compactMapValues(\.valueLocation)
        }
    }

    /// The file name put in every diagnostic.
    let path: String?
    /// Original text of keys that ``DuplicateKeyTolerantComposer`` rewrote, by key location.
    let keyOverrides: [SourceLocation: String]
    /// The rule names must follow (the engine's; see ``PatchNameRule``).
    let names: PatchNameRule
    /// Everything found wrong so far, in the order found.
    private(set) var diagnostics: [PatchDiagnostic] = []
    /// Names of buffers, nodes and recorders whose entries were left out of the document.
    var leftOutNames: Set<String> = []

    init(path: String?, keyOverrides: [SourceLocation: String] = [:], names: PatchNameRule) {
        self.path = path
        self.keyOverrides = keyOverrides
        self.names = names
    }

    /// Records an error.
    mutating func report(_ message: String, at location: SourceLocation?) {
        diagnostics.append(PatchDiagnostic(path: path, location: location, message: message))
    }

    // MARK: - Nodes

    /// Where `node` starts, from its Yams mark (already 1-based).
    static func location(of node: Node) -> SourceLocation? {
        node.mark.map { SourceLocation(line: $0.line, column: $0.column) }
    }

    /// `scalar` resolved with the YAML 1.2 core schema; quoted, block and `!!str` scalars are strings.
    static func resolve(_ scalar: Node.Scalar) -> YAMLScalar {
        let tag = scalar.tag.description
        let isPlain = (scalar.style == .plain || scalar.style == .any) && tag != Tag.Name.str.rawValue && tag != "!"
        return YAMLScalar.resolve(scalar.string, isPlain: isPlain)
    }

    static func isNull(_ node: Node) -> Bool {
        guard let scalar = node.scalar else { return false }
        return resolve(scalar) == .null
    }

    /// A phrase for messages: "a mapping", "a list", "a string (\"two\")", "an integer (3)",
    /// "nothing (null)".
    static func describe(_ node: Node) -> String {
        if node.mapping != nil { return "a mapping" }
        if node.sequence != nil { return "a list" }
        guard let scalar = node.scalar else { return "an alias" }
        switch resolve(scalar) {
        case .null: return "nothing (null)"
        case .bool(let value): return "a boolean (\(value))"
        case .int(let value): return "an integer (\(value))"
        case .double(let value): return "a number (\(format(value)))"
        case .string(let text):
            let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
            return "a string (\(YAMLScalarFormatter.quotedForMessage(shown)))"
        }
    }

    /// `48000` rather than `48000.0` for integral values; the shortest round-trip form otherwise.
    static func format(_ value: Double) -> String {
        if value.isFinite, value.rounded() == value, abs(value) < 1e15 { return String(Int(value)) }
        return YAMLScalarFormatter.double(value)
    }

    // MARK: - Mappings

    /// The entries of `mapping` whose keys are in `allowed`.
    ///
    /// Reports keys that are not scalars or are empty, duplicate keys (at the later one, naming the
    /// line of the first) and unknown keys (with the closest allowed key and the full list).
    /// `context` names the mapping in messages ("node", "the patch").
    mutating func fields(of mapping: Node.Mapping, context: String, allowed: [String]) -> Fields {
        var fields = Fields(location: mapping.mark.map { SourceLocation(line: $0.line, column: $0.column) })
        for (key, keyLocation, value) in keyedEntries(of: mapping, keyKind: "key") {
            guard allowed.contains(key) else {
                let suggestion = SpellingSuggestion.closest(to: key, among: allowed)
                let hint = suggestion.map { " (did you mean '\($0)'?)" } ?? ""
                if let suggestion { fields.suggested.insert(suggestion) }
                report(
                    "unknown key '\(key)' in \(context)\(hint); allowed keys: \(allowed.joined(separator: ", "))",
                    at: keyLocation)
                continue
            }
            fields.entries[key] = Entry(key: key, keyLocation: keyLocation, value: value)
        }
        return fields
    }

    /// The entries of `mapping` with string keys, first occurrence of each, in file order.
    /// Reports non-scalar keys, empty keys and duplicate keys; `keyKind` names keys in messages.
    mutating func keyedEntries(
        of mapping: Node.Mapping, keyKind: String
    ) -> [(key: String, keyLocation: SourceLocation?, value: Node)] {
        var result: [(key: String, keyLocation: SourceLocation?, value: Node)] = []
        var firstLocations: [String: SourceLocation?] = [:]
        for (keyNode, value) in mapping {
            let keyLocation = Self.location(of: keyNode)
            guard let key = keyLocation.flatMap({ keyOverrides[$0] }) ?? keyNode.scalar?.string else {
                report("a \(keyKind) must be a plain name, found \(Self.describe(keyNode))", at: keyLocation)
                continue
            }
            if key.isEmpty {
                report("a \(keyKind) must not be empty", at: keyLocation)
                continue
            }
            if let first = firstLocations[key] {
                report("duplicate \(keyKind) '\(key)'\(Self.firstSeen(first, from: keyLocation))", at: keyLocation)
                continue
            }
            firstLocations[key] = keyLocation
            result.append((key, keyLocation, value))
        }
        return result
    }

    /// " (first at line N)" — with the column too when `later` is on the same line — or nothing
    /// when the first location is unknown.
    static func firstSeen(_ first: SourceLocation?, from later: SourceLocation?, verb: String = "first at") -> String {
        guard let first else { return "" }
        if first.line == later?.line { return " (\(verb) line \(first.line), column \(first.column))" }
        return " (\(verb) line \(first.line))"
    }

    /// Reports "<context> is missing required key '<key>'<detail>" at the mapping, unless a
    /// misspelling of `key` was already reported.
    mutating func reportMissing(_ key: String, in fields: Fields, context: String, detail: String = "") {
        guard !fields.suggested.contains(key) else { return }
        report("\(context) is missing required key '\(key)'\(detail)", at: fields.location)
    }

    // MARK: - Typed values

    /// The value as a mapping, or `nil` after reporting "'key' must be a mapping, found …".
    mutating func mappingValue(_ entry: Entry) -> Node.Mapping? {
        if let mapping = entry.value.mapping { return mapping }
        report("'\(entry.key)' must be a mapping, found \(Self.describe(entry.value))", at: entry.valueLocation)
        return nil
    }

    /// The value as a list (null counts as empty), or `nil` after reporting a type error.
    mutating func listValue(_ entry: Entry) -> [Node]? {
        if let sequence = entry.value.sequence { return Array(sequence) }
        if entry.isNull { return [] }
        report("'\(entry.key)' must be a list, found \(Self.describe(entry.value))", at: entry.valueLocation)
        return nil
    }

    /// The text of a scalar value exactly as written, whatever it resolves to (`name: 01` is "01").
    /// Reports null, lists, mappings and, unless `allowEmpty`, empty text.
    mutating func string(_ entry: Entry, allowEmpty: Bool = false) -> String? {
        guard let scalar = entry.value.scalar, !entry.isNull else {
            report("'\(entry.key)' must be a string, found \(Self.describe(entry.value))", at: entry.valueLocation)
            return nil
        }
        if scalar.string.isEmpty, !allowEmpty {
            report("'\(entry.key)' must not be empty", at: entry.valueLocation)
            return nil
        }
        return scalar.string
    }

    /// The value as an integer (an integral number such as `48000.0` is accepted), checked against
    /// `range`; `nil` after reporting a type or range error.
    mutating func int(_ entry: Entry, in range: ClosedRange<Int>? = nil) -> Int? {
        guard let scalar = entry.value.scalar, let value = Self.patchValue(Self.resolve(scalar))?.asInt else {
            report("'\(entry.key)' must be an integer, found \(Self.describe(entry.value))", at: entry.valueLocation)
            return nil
        }
        if let range, !range.contains(value) {
            report("'\(entry.key)' must be \(Self.phrase(range)), found \(value)", at: entry.valueLocation)
            return nil
        }
        return value
    }

    /// The value as a finite number (integers accepted) that satisfies `isValid`; `nil` after
    /// reporting a type error or "'key' must be <requirement>, found …".
    mutating func double(_ entry: Entry, requirement: String, isValid: (Double) -> Bool) -> Double? {
        guard let scalar = entry.value.scalar, let value = Self.patchValue(Self.resolve(scalar))?.asDouble else {
            report("'\(entry.key)' must be a number, found \(Self.describe(entry.value))", at: entry.valueLocation)
            return nil
        }
        guard value.isFinite, isValid(value) else {
            report("'\(entry.key)' must be \(requirement), found \(Self.format(value))", at: entry.valueLocation)
            return nil
        }
        return value
    }

    /// The value as a boolean per ``PatchValue/asBool``; `nil` after reporting a type error.
    mutating func bool(_ entry: Entry) -> Bool? {
        guard let scalar = entry.value.scalar, let value = Self.patchValue(Self.resolve(scalar))?.asBool else {
            report("'\(entry.key)' must be true or false, found \(Self.describe(entry.value))", at: entry.valueLocation)
            return nil
        }
        return value
    }

    /// A resolved scalar as a parameter value; `nil` for null.
    static func patchValue(_ scalar: YAMLScalar) -> PatchValue? {
        switch scalar {
        case .null: nil
        case .bool(let value): .bool(value)
        case .int(let value): .int(value)
        case .double(let value): .double(value)
        case .string(let text): .string(text)
        }
    }

    /// "between 1 and 64", "at least 0", "at most 10".
    static func phrase(_ range: ClosedRange<Int>) -> String {
        if range.upperBound == Int.max { return "at least \(range.lowerBound)" }
        if range.lowerBound == Int.min { return "at most \(range.upperBound)" }
        return "between \(range.lowerBound) and \(range.upperBound)"
    }
}
