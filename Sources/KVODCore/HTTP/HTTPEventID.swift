import KVOValues

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

    /// Reads `EPOCH:SEQ:N`; nil for anything else. `EPOCH:SEQ` is a
    /// ``ResumePoint``'s text, read by its rules.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"),
              let point = ResumePoint(String(text[..<colon])), let epoch = point.epoch,
              let seq = Int(exactly: point.seq), seq >= 0 else { return nil }
        let countText = text[text.index(after: colon)...]
        guard !countText.isEmpty, countText.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let count = Int(countText), count >= 1 else { return nil }
        self.init(epoch: epoch, seq: seq, count: count)
    }

    public var description: String { "\(epoch):\(seq):\(count)" }
}
