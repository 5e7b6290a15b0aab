import KVOProtocol
import KVOValues

/// The members a request may have, as the decoder reads them. A member's
/// case position is its bit in ``FieldSet`` and ``Fields/seen`` (of a
/// `UInt64`: at most 64 members), so the hot path makes no `String` for them;
/// its name is ``field``'s, spelled once in KVOProtocol.
enum RequestMember: Int, CaseIterable {
    case id, op, object, keyPath, keyPaths, value, values, index, indexes, options, context, since, epoch, policy,
         prefix, after, limit, ifModSeq, ifValue, ops, ephemeral, ttl, distinct, kinds, throttle,
         ack, awaiting, awaitTimeout, seq, compact, by, offset, update

    /// The protocol's name of each member, in case order (`RequestMemberTests` checks the order).
    private static let fields: [Field] = [
        .id, .op, .object, .keyPath, .keyPaths, .value, .values, .index, .indexes, .options, .context, .since, .epoch,
        .policy, .prefix, .after, .limit, .ifModSeq, .ifValue, .ops, .ephemeral, .ttl, .distinct, .kinds, .throttle,
        .ack, .await, .awaitTimeout, .seq, .compact, .by, .offset, .update,
    ]

    /// The member's name on the wire.
    var field: Field { Self.fields[rawValue] }

    var name: String { field.rawValue }

    init?(_ text: JSONText) {
        switch text {
        case .plain(let bytes): self.init(plain: bytes)
        // Escaped or non-ASCII: compared as Swift strings, as the names were before.
        case .decoded(let name):
            guard let member = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = member
        }
    }

    /// The member named by these bytes (a plain string's, between its
    /// quotes): up to sixteen, read as two words and looked up in ``slots``,
    /// with no `String` made.
    init?(plain bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, bytes.count <= 16 else { return nil }
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: bytes) }
        var slot = Self.slot(words)
        while let entry = Self.slots[slot] {
            if entry.0 == words.0, entry.1 == words.1 {
                self = entry.2
                return
            }
            slot = (slot + 1) & (Self.slots.count - 1)
        }
        return nil
    }

    /// Where a name read as two words (zeros after it: no name holds a zero
    /// byte, none is longer than sixteen bytes) is first looked for in
    /// ``slots``. The multiplier was picked, by trying, to give every name of
    /// today a slot of its own; a new one that collides is found a slot on.
    @inline(__always)
    private static func slot(_ words: (UInt64, UInt64)) -> Int {
        Int(truncatingIfNeeded: ((words.0 &+ words.1) &* 0x93F4_48B3_A5AA_3C81) >> 57)
    }

    /// Each member's name as two words, in an open-addressed table of 128
    /// slots (probed onwards from ``slot(_:)``).
    private static let slots: [(UInt64, UInt64, RequestMember)?] = {
        var table = [(UInt64, UInt64, RequestMember)?](repeating: nil, count: 128)
        for member in allCases {
            let name = Array(member.name.utf8)
            precondition(!name.isEmpty && name.count <= 16, "member names fit in two words")
            var words: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &words) { words in name.withUnsafeBytes { words.copyMemory(from: $0) } }
            var slot = slot(words)
            while table[slot] != nil { slot = (slot + 1) & (table.count - 1) }
            table[slot] = (words.0, words.1, member)
        }
        return table
    }()
}
