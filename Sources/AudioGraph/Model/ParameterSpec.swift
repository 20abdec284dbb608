// Control side. The single source of truth for every node parameter: type, unit, range, default.
// docs/PATCH_FORMAT.md and docs/OSC.md are checked against these tables by a test.

/// Describes one parameter of a node kind.
public struct ParameterSpec: Sendable, Equatable {
    public enum ValueType: String, Sendable {
        case float, int, bool, string
    }

    public var name: String
    /// The engine's typed key for this parameter (nil for the ones only users name: an effect kernel's,
    /// an EQ band's).
    public var key: ParameterKey?
    /// The effect kernel's `setParameter` index this parameter drives, if any.
    public var kernelIndex: Int?
    public var type: ValueType
    /// Unit shown to users ("linear", "frames", "" for none).
    public var unit: String
    public var minimum: Double?
    public var maximum: Double?
    public var defaultValue: ParameterValue
    /// True when changes glide (de-zippered) instead of jumping.
    public var isSmoothed: Bool
    /// True when the value is derived and cannot be set.
    public var isReadOnly: Bool
    /// True when the value can be given only when the node is created.
    public var isCreationOnly: Bool
    /// True for a string naming a file the engine reads (a player's audio, an environment's SOFA set):
    /// relative to the patch in a patch file, confined to the file roots over OSC, read off the control
    /// thread.
    public var isFilePath: Bool
    /// For a string parameter with a fixed set of values (presets, filter types): the names, in index
    /// order. Setting accepts a name or its index.
    public var choices: [String]
    public var summary: String
    /// True when the upper bound is also half the engine's sample rate (a filter frequency): `coerce`
    /// given the rate refuses a value above it.
    public var isMaximumNyquist = false

    public init(
        _ name: String, _ type: ValueType, unit: String = "", range: ClosedRange<Double>? = nil,
        default defaultValue: ParameterValue, smoothed: Bool = false, readOnly: Bool = false,
        creationOnly: Bool = false, filePath: Bool = false, choices: [String] = [], _ summary: String
    ) {
        isCreationOnly = creationOnly
        isFilePath = filePath
        self.choices = choices
        self.name = name
        key = ParameterKey(name: name)
        self.type = type
        self.unit = unit
        minimum = range?.lowerBound
        maximum = range?.upperBound
        self.defaultValue = defaultValue
        isSmoothed = smoothed
        isReadOnly = readOnly
        self.summary = summary
    }

    /// A parameter the engine has a key for (how the node kinds' tables are declared).
    public init(
        _ key: ParameterKey, _ type: ValueType, unit: String = "", range: ClosedRange<Double>? = nil,
        default defaultValue: ParameterValue, smoothed: Bool = false, readOnly: Bool = false,
        creationOnly: Bool = false, filePath: Bool = false, choices: [String] = [], _ summary: String
    ) {
        self.init(
            key.name, type, unit: unit, range: range, default: defaultValue, smoothed: smoothed, readOnly: readOnly,
            creationOnly: creationOnly, filePath: filePath, choices: choices, summary)
    }

    /// Converts `value` to this parameter's type, or explains why it cannot.
    ///
    /// Numbers convert between int and float (a float must be whole for an int parameter); booleans
    /// accept true/false and the numbers 0/1. NaN and infinities are refused. Out-of-range values are
    /// refused (never clamped) with the valid range in the message.
    public func coerce(_ value: ParameterValue, node: String, sampleRate: Double? = nil) throws(EngineError)
        -> ParameterValue
    {
        guard isMaximumNyquist, let sampleRate, sampleRate > 0, let maximum, sampleRate / 2 < maximum else {
            return try coerceInRange(value, node: node)
        }
        var bounded = self
        bounded.maximum = sampleRate / 2
        return try bounded.coerceInRange(value, node: node)
    }

    private func coerceInRange(_ value: ParameterValue, node: String) throws(EngineError) -> ParameterValue {
        // Built only for an error message (a set is frequent; the interpolation is not free).
        var what: String { "\(node).\(name)" }
        switch type {
        case .string:
            if !choices.isEmpty {
                if let name = value.stringValue, choices.contains(name) { return .string(name) }
                if let index = value.intValue, choices.indices.contains(index) { return .string(choices[index]) }
                throw EngineError(
                    .outOfRange,
                    "\(what): \(value) is not one of: \(choices.enumerated().map { "\($0.offset) \($0.element)" }.joined(separator: ", "))"
                )
            }
            guard let s = value.stringValue else {
                throw EngineError(.wrongType, "\(what) takes a string, not \(value)")
            }
            return .string(s)
        case .bool:
            guard let b = value.boolValue else {
                throw EngineError(.wrongType, "\(what) takes a boolean (true/false or 1/0), not \(value)")
            }
            return .bool(b)
        case .int:
            guard let i = value.intValue else {
                throw EngineError(.wrongType, "\(what) takes a whole number, not \(value)")
            }
            try check(Double(i), what: what)
            return .int(i)
        case .float:
            guard let d = value.doubleValue, value.stringValue == nil else {
                throw EngineError(.wrongType, "\(what) takes a number, not \(value)")
            }
            guard d.isFinite else { throw EngineError(.outOfRange, "\(what) must be finite, not \(d)") }
            try check(d, what: what)
            return .float(d)
        }
    }

    private func check(_ v: Double, what: @autoclosure () -> String) throws(EngineError) {
        // A whole-number parameter's value is shown as one (3, not 3.0).
        let shown = type == .int && v.rounded() == v && abs(v) < 1e15 ? String(Int64(v)) : "\(v)"
        // A parameter with a single accepted value (kept for compatibility) says why in its summary.
        if let lo = minimum, let hi = maximum, lo == hi, v != lo {
            throw EngineError(.outOfRange, "\(what()) = \(shown) is refused: \(summary)")
        }
        if let lo = minimum, v < lo {
            throw EngineError(.outOfRange, "\(what()) = \(shown) is out of range \(rangeText)")
        }
        if let hi = maximum, v > hi {
            throw EngineError(.outOfRange, "\(what()) = \(shown) is out of range \(rangeText)")
        }
    }

    /// "0…1", "≥ 0" or "any".
    public var rangeText: String {
        func fmt(_ d: Double) -> String { d.rounded() == d && abs(d) < 1e15 ? String(Int(d)) : String(d) }
        switch (minimum, maximum) {
        case let (lo?, hi?): return "\(fmt(lo))…\(fmt(hi))"
        case let (lo?, nil): return "≥ \(fmt(lo))"
        case let (nil, hi?): return "≤ \(fmt(hi))"
        default: return "any"
        }
    }
}
