/// Keeps a flood of refused connections from flooding the log: one line per
/// second at most, which says how many were refused without a line.
struct RefusalLog {
    private var lastLogged: UInt64?
    private var unlogged = 0

    /// Records one refusal at loop time `now` (ms). Returns nil when it is not
    /// to be logged, else how many refusals went unlogged before it.
    mutating func record(now: UInt64) -> Int? {
        if let lastLogged, now - lastLogged < 1_000 {
            unlogged += 1
            return nil
        }
        lastLogged = now
        defer { unlogged = 0 }
        return unlogged
    }

    /// `""`, or ` (and N more since the last message)`, for the logged line.
    static func suffix(unlogged: Int) -> String {
        unlogged == 0 ? "" : " (and \(unlogged) more since the last message)"
    }
}
