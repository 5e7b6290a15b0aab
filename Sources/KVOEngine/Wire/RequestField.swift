#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import KVOValues

/// The members a request may have. Names are matched on their bytes, and a
/// bit per field (of a `UInt64`: at most 64 fields) catches repeats, so the
/// hot path makes no `String` for them.
enum Field: Int, CaseIterable {
    case id, op, object, keyPath, keyPaths, value, values, index, indexes, options, context, since, epoch, policy,
         prefix, after, limit, ifModSeq, ifValue, ops, ephemeral, ttl, distinct, kinds, throttle,
         ack, awaiting, awaitTimeout, seq, compact, by, offset, update

    var name: String { staticName.description }

    init?(_ text: JSONText) {
        switch text {
        case .plain(let bytes): self.init(plain: bytes)
        // Escaped or non-ASCII: compared as Swift strings, as the names were before.
        case .decoded(let name): guard let field = Field.allCases.first(where: { $0.name == name }) else { return nil }
            self = field
        }
    }

    init?(plain bytes: UnsafeRawBufferPointer) {
        let field: Field
        switch (bytes.count, bytes.first ?? 0) {
        case (2, UInt8(ascii: "o")): field = .op
        case (2, UInt8(ascii: "i")): field = .id
        case (5, UInt8(ascii: "v")): field = .value
        case (5, UInt8(ascii: "i")): field = .index
        case (5, UInt8(ascii: "s")): field = .since
        case (5, UInt8(ascii: "e")): field = .epoch
        case (6, UInt8(ascii: "o")): field = bytes[1] == UInt8(ascii: "b") ? .object : .offset
        case (6, UInt8(ascii: "v")): field = .values
        case (6, UInt8(ascii: "p")): field = bytes[1] == UInt8(ascii: "o") ? .policy : .prefix
        case (5, UInt8(ascii: "a")): field = bytes[1] == UInt8(ascii: "f") ? .after : .awaiting
        case (5, UInt8(ascii: "l")): field = .limit
        case (7, UInt8(ascii: "k")): field = .keyPath
        case (7, UInt8(ascii: "o")): field = .options
        case (7, UInt8(ascii: "c")): field = bytes[2] == UInt8(ascii: "n") ? .context : .compact
        case (7, UInt8(ascii: "i")): field = bytes[1] == UInt8(ascii: "n") ? .indexes : .ifValue
        case (8, UInt8(ascii: "i")): field = .ifModSeq
        case (3, UInt8(ascii: "o")): field = .ops
        case (9, UInt8(ascii: "e")): field = .ephemeral
        case (3, UInt8(ascii: "t")): field = .ttl
        case (8, UInt8(ascii: "k")): field = .keyPaths
        case (8, UInt8(ascii: "d")): field = .distinct
        case (5, UInt8(ascii: "k")): field = .kinds
        case (8, UInt8(ascii: "t")): field = .throttle
        case (3, UInt8(ascii: "a")): field = .ack
        case (12, UInt8(ascii: "a")): field = .awaitTimeout
        case (3, UInt8(ascii: "s")): field = .seq
        case (2, UInt8(ascii: "b")): field = .by
        case (6, UInt8(ascii: "u")): field = .update
        default: return nil
        }
        // Length and first byte pick the only candidate; the bytes must still match it.
        guard bytes.elementsEqual(field.staticName) else { return nil }
        self = field
    }

    private var staticName: StaticString {
        switch self {
        case .id: "id"
        case .op: "op"
        case .object: "object"
        case .keyPath: "keyPath"
        case .keyPaths: "keyPaths"
        case .value: "value"
        case .values: "values"
        case .index: "index"
        case .indexes: "indexes"
        case .options: "options"
        case .context: "context"
        case .since: "since"
        case .epoch: "epoch"
        case .policy: "policy"
        case .prefix: "prefix"
        case .after: "after"
        case .limit: "limit"
        case .ifModSeq: "ifModSeq"
        case .ifValue: "ifValue"
        case .ops: "ops"
        case .ephemeral: "ephemeral"
        case .ttl: "ttl"
        case .distinct: "distinct"
        case .kinds: "kinds"
        case .throttle: "throttle"
        case .ack: "ack"
        case .awaiting: "await"
        case .awaitTimeout: "awaitTimeout"
        case .seq: "seq"
        case .compact: "compact"
        case .by: "by"
        case .offset: "offset"
        case .update: "update"
        }
    }
}

extension UnsafeRawBufferPointer {
    /// Whether these bytes are exactly `literal`'s UTF-8.
    @inline(__always)
    func elementsEqual(_ literal: StaticString) -> Bool {
        guard count == literal.utf8CodeUnitCount else { return false }
        // memcmp: a byte loop here cost a hundred instructions per member name.
        return count == 0 || memcmp(baseAddress!, literal.utf8Start, count) == 0
    }
}
