/// A history cut at its quiescent points: moments at which no operation is
/// in flight (each one called before has returned before, none straddles
/// it). Every order that fits the history then runs through them in turn,
/// the operations before one ahead of those after, so each segment can be
/// searched on its own from the states the one before may end in.
///
/// An operation of unknown outcome returns at infinity: it may still take
/// effect at any later moment, so no point after its call is quiescent and
/// the rest of the history is one segment. Touching intervals (an answer at
/// the very time of another call) are concurrent, as ``EntryList`` takes them.
public enum QuiescentSegments {
    /// The indices of `history`'s operations, a segment each, in time order
    /// (within a segment, by call time).
    public static func split<Input, Output>(_ history: [HistoryOperation<Input, Output>]) -> [[Int]] {
        let order = history.indices.sorted { history[$0].call < history[$1].call || (history[$0].call == history[$1].call && $0 < $1) }
        var segments: [[Int]] = []
        var current: [Int] = []
        var latestReturn = -Double.infinity
        for index in order {
            if !current.isEmpty && latestReturn < history[index].call {
                segments.append(current)
                current = []
            }
            current.append(index)
            latestReturn = max(latestReturn, history[index].returned)
        }
        if !current.isEmpty { segments.append(current) }
        return segments
    }
}
