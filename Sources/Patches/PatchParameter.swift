// Control side. One `key: value` entry of a node's `params` mapping, with where it was written.

/// One node parameter as written in a patch, in file order.
///
/// Which keys exist for a node kind, and their types and ranges, is for the engine to decide; this
/// module only guarantees that `key` is a non-empty string and `value` a scalar or a flat list.
public struct PatchParameter: Sendable, Equatable {
    /// The parameter name as written (for example `volume`).
    public var key: String
    /// The parameter value.
    public var value: PatchValue
    /// Where the key starts; `nil` for a parameter built in code.
    public var keyLocation: SourceLocation?
    /// Where the value starts (the `[` of a flow list, the first `-` of a block list).
    public var valueLocation: SourceLocation?

    /// Creates a parameter; locations default to `nil` (built in code, not read from a file).
    public init(
        key: String, value: PatchValue, keyLocation: SourceLocation? = nil, valueLocation: SourceLocation? = nil
    ) {
        self.key = key
        self.value = value
        self.keyLocation = keyLocation
        self.valueLocation = valueLocation
    }

    /// A copy with every location set to `nil`, for comparisons that ignore where things were written.
    public func withoutLocations() -> PatchParameter {
        PatchParameter(key: key, value: value)
    }
}
