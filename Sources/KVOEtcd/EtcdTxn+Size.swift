/// A transaction measured as etcd measures it against its limits, before it
/// is sent: `--max-request-bytes` bounds the proposal etcd hands to Raft (the
/// `TxnRequest`'s protobuf encoding inside an `InternalRaftRequest` with its
/// header), and `--max-txn-ops` the compares and each branch's operations.
extension EtcdTxnRequest {
    /// The most bytes etcd's proposal of this transaction can take: its
    /// protobuf encoding (field numbers of etcd 3.4's `rpc.proto`), the field
    /// that wraps it, and the largest ids and no user (etcd refuses with
    /// "request is too large" above `--max-request-bytes`).
    public var proposalBytes: Int {
        // The header (field 100: a 2-byte tag, a length, the id's tag and a
        // 10-byte varint), and the request's own id field, when set.
        let ids = (2 + 1 + 1 + 10) + (1 + 10)
        return Protobuf.field(6, length: protobufBytes) + ids
    }

    /// The transaction's own protobuf encoding (`TxnRequest`).
    public var protobufBytes: Int {
        compare.reduce(0) { $0 + Protobuf.field(1, length: $1.protobufBytes) }
            + success.reduce(0) { $0 + Protobuf.field(2, length: $1.protobufBytes) }
            + failure.reduce(0) { $0 + Protobuf.field(3, length: $1.protobufBytes) }
    }

    /// What etcd counts against `--max-txn-ops`: the compares, or the
    /// larger branch, whichever holds more.
    public var operationCount: Int { max(compare.count, success.count, failure.count) }
}

extension EtcdCompare {
    var protobufBytes: Int {
        // The result, EQUAL, is 0: at its default, not sent.
        var bytes = Protobuf.bytes(3, range.key) + Protobuf.bytes(64, range.rangeEnd)
        // The target's value is a oneof: sent even when it is zero.
        switch target {
        case .version(let version): bytes += Protobuf.varintAlways(4, UInt64(bitPattern: version))
        case .modRevision(let revision):
            bytes += Protobuf.varint(2, 2) + Protobuf.varintAlways(6, UInt64(bitPattern: revision))
        case .value(let value): bytes += Protobuf.varint(2, 3) + Protobuf.field(7, length: value.count)
        }
        return bytes
    }
}

extension EtcdRequestOp {
    /// Its `RequestOp` encoding: the one request it wraps.
    var protobufBytes: Int {
        switch self {
        case .range(let request):
            let inner = Protobuf.bytes(1, request.range.key) + Protobuf.bytes(2, request.range.rangeEnd)
                + Protobuf.varint(3, UInt64(bitPattern: request.limit))
                + Protobuf.varint(4, UInt64(bitPattern: request.revision))
            return Protobuf.field(1, length: inner)
        case .put(let request):
            let inner = Protobuf.bytes(1, request.key) + Protobuf.bytes(2, request.value)
                + Protobuf.varint(3, UInt64(bitPattern: request.lease)) + Protobuf.varint(4, request.prevKV ? 1 : 0)
            return Protobuf.field(2, length: inner)
        case .delete(let request):
            let inner = Protobuf.bytes(1, request.range.key) + Protobuf.bytes(2, request.range.rangeEnd)
                + Protobuf.varint(3, request.prevKV ? 1 : 0)
            return Protobuf.field(3, length: inner)
        }
    }
}

/// Sizes of protobuf's wire format (proto3: a field at its default is not sent).
enum Protobuf {
    static func varintSize(_ value: UInt64) -> Int {
        var value = value, size = 1
        while value >= 0x80 {
            value >>= 7
            size += 1
        }
        return size
    }

    static func tagSize(_ field: UInt64) -> Int { varintSize(field << 3) }

    /// A length-delimited field of `length` bytes, sent whatever its length.
    static func field(_ number: UInt64, length: Int) -> Int {
        tagSize(number) + varintSize(UInt64(length)) + length
    }

    /// A bytes field; nothing when empty.
    static func bytes(_ number: UInt64, _ value: [UInt8]) -> Int {
        value.isEmpty ? 0 : field(number, length: value.count)
    }

    /// A varint field; nothing when 0.
    static func varint(_ number: UInt64, _ value: UInt64) -> Int {
        value == 0 ? 0 : varintAlways(number, value)
    }

    /// A varint field that is sent even when 0 (a oneof's).
    static func varintAlways(_ number: UInt64, _ value: UInt64) -> Int { tagSize(number) + varintSize(value) }
}
