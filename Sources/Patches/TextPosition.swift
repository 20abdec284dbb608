// Control side. Maps libyaml line/column positions onto a String and back.

/// Conversions between 1-based line/column positions, as libyaml counts them, and a text.
///
/// Lines end where libyaml ends them: LF, CRLF, CR, NEL (U+0085), LS (U+2028) or PS (U+2029);
/// columns count Unicode scalars.
enum TextPosition {
    /// The index of the Unicode scalar at `location`, or `nil` if the text has no such position.
    static func index(of location: SourceLocation, in text: String) -> String.UnicodeScalarView.Index? {
        var line = 1
        var column = 1
        var previous: Unicode.Scalar?
        let scalars = text.unicodeScalars
        for index in scalars.indices {
            let scalar = scalars[index]
            defer { previous = scalar }
            if scalar == "\n" && previous == "\r" { continue }
            if line == location.line && column == location.column { return index }
            if isLineBreak(scalar) {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return nil
    }

    /// The location of the `offset`-th Character (Swift's `Character`, as Yams' reader errors count).
    static func location(ofCharacterOffset offset: Int, in text: String) -> SourceLocation {
        var line = 1
        var column = 1
        for character in text.prefix(offset) {
            if character.unicodeScalars.contains(where: isLineBreak) {
                line += 1
                column = 1
            } else {
                column += character.unicodeScalars.count
            }
        }
        return SourceLocation(line: line, column: column)
    }

    private static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "\n", "\r", "\u{85}", "\u{2028}", "\u{2029}": true
        default: false
        }
    }
}
