// Control side. A 1-based line and column in a patch file.

/// A position in a patch file: 1-based line and 1-based column.
///
/// Columns count Unicode scalars from the start of the line, as libyaml (and so Yams) does;
/// for ASCII text that is the character count. A tab counts as one column.
public struct SourceLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// 1-based line number.
    public var line: Int
    /// 1-based column number, counted in Unicode scalars.
    public var column: Int

    /// Creates a location from a 1-based line and column.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// `"line:column"`, the form compilers print.
    public var description: String { "\(line):\(column)" }

    /// Orders by line, then by column.
    public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }
}
