/// A Server-Sent Event's id, `EPOCH:SEQ:N`: the kvod history (epoch) and the
/// seq of the change it tells of, and how many events of that seq this stream
/// had sent with it (one seq can carry several: several key paths, a prefix, a
/// batch). A browser sends the last one back as `Last-Event-ID`, and the watch
/// goes on after it: `since` SEQ−1 with the first N events of SEQ left out.
public struct HTTPEventID: Equatable, Sendable, CustomStringConvertible {
    public let epoch: String
    public let seq: Int
    public let count: Int

    public init(epoch: String, seq: Int, count: Int) {
        self.epoch = epoch
        self.seq = seq
        self.count = count
    }

    /// Reads `EPOCH:SEQ:N`; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy({ $0.isHexDigit }),
              let seq = Int(parts[1]), seq >= 1, let count = Int(parts[2]), count >= 1 else { return nil }
        self.init(epoch: String(parts[0]), seq: seq, count: count)
    }

    public var description: String { "\(epoch):\(seq):\(count)" }
}
