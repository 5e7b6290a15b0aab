extension Duration {
    /// Whole milliseconds, rounded up, as kvod's millisecond fields take them.
    /// Beyond a year either way the exact figure does not matter: kvod refuses it by its limit.
    var wholeMillisecondsRoundedUp: Int {
        let (seconds, attoseconds) = components
        guard abs(seconds) < 31_536_000 else { return seconds > 0 ? 31_536_000_000 : 0 }
        let perMillisecond: Int64 = 1_000_000_000_000_000
        let milliseconds = seconds * 1000 + attoseconds / perMillisecond
        return Int(attoseconds % perMillisecond > 0 ? milliseconds + 1 : milliseconds)
    }
}
