// Control side. Composes YAML with Yams so that duplicate mapping keys reach our own checker,
// whichever Yams major version is resolved.

import Yams

/// Runs `Yams.compose` and keeps duplicate mapping keys instead of failing on them.
///
/// Yams 5 composes duplicate keys silently; Yams 6 throws `duplicatedKeysInMapping` for the first
/// one it finds, with the position of its *first* occurrence only. To report every duplicate at
/// its *second* occurrence (as ``PatchSchemaReader`` does), this composer, on that error, replaces
/// the first character of the reported key occurrence with a private-use character and composes
/// again. One scalar replaces one scalar, so every line and column stays the same; the original key
/// text is returned in ``Result/keyOverrides`` by location. The Yams 6 error case is matched by
/// reflection, since it does not exist in Yams 5.
enum DuplicateKeyTolerantComposer {
    struct Result {
        /// The document's root node; `nil` for an empty stream.
        let root: Node?
        /// Keys whose text was replaced, by the location of the key, with their original text.
        let keyOverrides: [SourceLocation: String]
    }

    /// A duplicate key that could not be neutralized, reported where Yams found it.
    struct UnresolvedDuplicate: Error {
        let key: String
        let location: SourceLocation
    }

    /// The most keys replaced before giving up (each replacement costs one more parse).
    private static let maximumReplacements = 64

    static func compose(_ text: String) throws -> Result {
        var text = text
        var overrides: [SourceLocation: String] = [:]
        while true {
            do {
                return Result(root: try Yams.compose(yaml: text), keyOverrides: overrides)
            } catch {
                guard let duplicate = duplicateKey(in: error) else { throw error }
                guard overrides.count < maximumReplacements, overrides[duplicate.location] == nil,
                    let rewritten = replacingKeyCharacter(at: duplicate.location, in: text, index: overrides.count)
                else { throw UnresolvedDuplicate(key: duplicate.key, location: duplicate.location) }
                overrides[duplicate.location] = duplicate.key
                text = rewritten
            }
        }
    }

    /// The key and location of a Yams 6 `duplicatedKeysInMapping(duplicates:context:)` error.
    private static func duplicateKey(in error: any Error) -> (key: String, location: SourceLocation)? {
        guard let yamlError = error as? YamlError,
            let child = Mirror(reflecting: yamlError).children.first, child.label == "duplicatedKeysInMapping"
        else { return nil }
        let payload = Mirror(reflecting: child.value).children
        guard let keys = payload.first(where: { $0.label == "duplicates" })?.value as? [String],
            let key = keys.first,
            let context = payload.first(where: { $0.label == "context" })?.value as? YamlError.Context,
            context.mark.line > 0
        else { return nil }
        return (key, SourceLocation(line: context.mark.line, column: context.mark.column))
    }

    /// `text` with the first character of the key starting at `location` replaced by U+E000 + `index`
    /// (after the opening quote of a quoted key); `nil` if the key is not a simple plain or quoted
    /// scalar there (an alias, an anchored or tagged key, a block scalar, an empty quoted key).
    private static func replacingKeyCharacter(at location: SourceLocation, in text: String, index: Int) -> String? {
        let scalars = text.unicodeScalars
        guard var position = TextPosition.index(of: location, in: text),
            let replacement = Unicode.Scalar(0xE000 + UInt32(index))
        else { return nil }
        let first = scalars[position]
        if first == "\"" || first == "'" {
            position = scalars.index(after: position)
            guard position < scalars.endIndex, scalars[position] != first else { return nil }
        }
        switch scalars[position] {
        case "*", "&", "!", "|", ">", "?", "\n", "\r", " ", "\t", "{", "[": return nil
        default: break
        }
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars[..<position])
        result.append(replacement)
        result.append(contentsOf: scalars[scalars.index(after: position)...])
        return String(result)
    }
}
