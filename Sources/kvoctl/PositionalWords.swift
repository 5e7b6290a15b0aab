import ArgumentParser

/// The positional words of a command that takes values, collected with
/// ArgumentParser's `.allUnrecognized` so that `kvoctl set x y -5` works:
/// ArgumentParser would read `-5` as an option.
enum PositionalWords {
    /// The words with the first `--` removed. Before it, a word that starts
    /// with `-` must be a negative number (`-5`, `-0.5`, `-1e3`); any other is
    /// an option kvoctl does not know. After it, every word is a value.
    static func values(_ words: [String]) throws(ValidationError) -> [String] {
        var values: [String] = []
        var optionsEnded = false
        for word in words {
            if !optionsEnded && word == "--" {
                optionsEnded = true
            } else if !optionsEnded && looksLikeAnOption(word) {
                throw ValidationError(
                    "Unknown option '\(word)'; a value that starts with '-' and is not a number goes after '--': -- \(word)")
            } else {
                values.append(word)
            }
        }
        return values
    }

    /// `-x`, `--name`; not `-` alone, nor `-5` or `-.5`, nor `-Infinity` (which
    /// ``ValueArgument`` then refuses as a number that JSON does not have).
    private static func looksLikeAnOption(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.count > 1 else { return false }
        let next = word[word.index(after: word.startIndex)]
        return !(next.isASCII && (next.isWholeNumber || next == ".")) && !JSONLookalike.matches(word[...])
    }
}
