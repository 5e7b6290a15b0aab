/// A resume point as one word, `EPOCH:SEQ` (`9f0c2d41a7b35e18:42`), or `SEQ`
/// alone when the epoch is unknown: what kvoctl prints and takes, and what a
/// program can keep in a file.
extension ResumePoint: LosslessStringConvertible {
    public var description: String {
        epoch.map { "\($0):\(seq)" } ?? String(seq)
    }

    /// Reads `EPOCH:SEQ` or `SEQ`; nil for anything else. An epoch is 1 to 64
    /// hex digits (kvod's are 16), a seq a decimal `UInt64`.
    public init?(_ description: String) {
        let parts = description.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let seqText = parts.last, Self.isDecimal(seqText), let seq = UInt64(seqText) else { return nil }
        if parts.count == 1 {
            self.init(seq: seq)
            return
        }
        let epoch = parts[0]
        guard (1...64).contains(epoch.utf8.count), epoch.utf8.allSatisfy(Self.isHexDigit) else { return nil }
        self.init(seq: seq, epoch: String(epoch))
    }

    /// Digits only: `UInt64("+4")` would take the sign.
    private static func isDecimal(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
             UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }
}
