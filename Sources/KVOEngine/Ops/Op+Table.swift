import KVOProtocol
import KVOValues

extension Op {
    /// The op's position in `Op.allCases`: its row in ``OpSpec/table``, its
    /// index in the daemon's figures by op. A case of an enum without
    /// payloads is stored as its position (`OpTableTests` checks it).
    public var ordinal: Int { Int(unsafeBitCast(self, to: UInt8.self)) }

    /// The op's row.
    var spec: OpSpec { OpSpec.table[ordinal] }

    /// The op a request's `op` string names; nil for none.
    init?(_ text: JSONText) {
        switch text {
        case .plain(let bytes): self.init(plainName: bytes)
        case .decoded(let name): self.init(rawValue: name)
        }
    }

    /// The op named by these bytes (a plain string's, between its quotes):
    /// up to sixteen, read as two words and compared with each op's name
    /// read so (``nameWords``), with no `String` made.
    init?(plainName bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, bytes.count <= 16 else { return nil }
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: bytes) }
        for entry in Self.nameWords where entry.0 == words.0 && entry.1 == words.1 {
            self = entry.2
            return
        }
        return nil
    }

    /// Each op's name as ``init(plainName:)`` reads one, zeros after it (no
    /// name holds a zero byte, and none is longer than sixteen bytes).
    private static let nameWords: [(UInt64, UInt64, Op)] = allCases.map { op in
        let name = Array(op.rawValue.utf8)
        precondition(name.count <= 16, "op names fit in two words")
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { words in name.withUnsafeBytes { words.copyMemory(from: $0) } }
        return (words.0, words.1, op)
    }
}
