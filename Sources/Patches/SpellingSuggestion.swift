// Control side. Finds the allowed word closest to a misspelt one, for "did you mean …?" hints.

/// "Did you mean" suggestions by edit distance.
public enum SpellingSuggestion {
    /// The candidate closest to `word`, or `nil` if none is close enough.
    ///
    /// Distance is the optimal-string-alignment edit distance (insertions, deletions,
    /// substitutions and adjacent transpositions each cost 1), compared case-insensitively.
    /// A candidate is close enough when the distance is at most a third of the longer word, rounded
    /// to nearest (at least 1, at most 3), or when it starts with `word` and `word` has 3 or more characters
    /// (`freq` → `frequency`). Ties go to the earlier candidate.
    public static func closest(to word: String, among candidates: [String]) -> String? {
        let lowered = Array(word.lowercased().unicodeScalars)
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let other = Array(candidate.lowercased().unicodeScalars)
            let distance = editDistance(lowered, other)
            let limit = min(3, max(1, (max(lowered.count, other.count) + 1) / 3))
            let isPrefix = lowered.count >= 3 && other.starts(with: lowered)
            guard distance <= limit || isPrefix else { continue }
            if best == nil || distance < best!.distance {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// Optimal string alignment distance (Damerau–Levenshtein restricted to non-overlapping edits).
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, previousPrevious[j - 2] + 1)
                }
                current[j] = value
            }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[b.count]
    }
}
