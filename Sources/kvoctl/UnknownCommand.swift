import ArgumentParser

/// `kvoctl gte o k`: the word where a command name belongs names none, so
/// kvoctl says that (and the likeliest command meant), not ArgumentParser's
/// `3 unexpected arguments`.
enum UnknownCommand {
    /// kvoctl's own options that take a value, which may come before the command name
    /// (and ArgumentParser's, though main asks only after a parse that failed).
    private static let optionsWithValue: Set<String> = ["--socket", "--request-timeout", "--generate-completion-script"]

    /// The message for `arguments` (without the program's name) when their first
    /// word that is not an option names no command; nil when it does, or there is none.
    static func message(_ arguments: [String], commands: [String]) -> String? {
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if word == "--" { return nil }
            if word.hasPrefix("-") {
                index += optionsWithValue.contains(word) ? 2 : 1
                continue
            }
            if commands.contains(word) || word == "help" { return nil }
            let guess = suggestion(for: word, among: commands).map { "; did you mean '\($0)'?" } ?? ""
            return "kvoctl: unknown command '\(word)'\(guess) (kvoctl --help lists them)"
        }
        return nil
    }

    /// The command `word` most likely misspells: one it starts, or within two
    /// edits (a swap of neighbours counts as one); nil when none is that close.
    static func suggestion(for word: String, among commands: [String]) -> String? {
        if word.count >= 2, let started = commands.first(where: { $0.hasPrefix(word) }) { return started }
        let scored = commands.map { (name: $0, distance: distance(Array(word.lowercased()), Array($0))) }
        guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= min(2, word.count / 2)
        else { return nil }
        return best.name
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions
    /// and swaps of two neighbours, each counting one.
    private static func distance(_ a: [Character], _ b: [Character]) -> Int {
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in stride(from: 1, through: a.count, by: 1) {
            for j in stride(from: 1, through: b.count, by: 1) {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
