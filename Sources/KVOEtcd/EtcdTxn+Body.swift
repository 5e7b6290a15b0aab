import KVOValues

/// A transaction's JSON body written straight into bytes, keys and values
/// base64-encoded in place: what `json.jsonBytes` writes, byte for byte,
/// without a tree of values and a `String` per key and value between (a
/// group commit's `Txn` puts a hundred documents; docs/PERFORMANCE.md).
/// Compares of a `mod_revision` and plain puts, kvod's, are written here;
/// any other part through its ``JSONValue``.
extension EtcdTxnRequest {
    var body: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + compare.count * 96
            + success.reduce(0) { $0 + $1.estimatedBodyBytes } + failure.reduce(0) { $0 + $1.estimatedBodyBytes })
        bytes += #"{"compare":["#.utf8
        for (index, compare) in compare.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            compare.write(into: &bytes)
        }
        bytes += #"],"success":["#.utf8
        EtcdRequestOp.write(success, into: &bytes)
        bytes += #"],"failure":["#.utf8
        EtcdRequestOp.write(failure, into: &bytes)
        bytes += "]}".utf8
        return bytes
    }
}

extension EtcdCompare {
    func write(into bytes: inout [UInt8]) {
        guard case .modRevision(let revision) = target, range.rangeEnd.isEmpty else {
            return JSONWriter.write(json, into: &bytes)
        }
        bytes += #"{"key":""#.utf8
        Base64.encode(range.key, into: &bytes)
        bytes += #"","result":"EQUAL","target":"MOD","mod_revision":""#.utf8
        bytes += String(revision).utf8
        bytes += #""}"#.utf8
    }
}

extension EtcdRequestOp {
    static func write(_ ops: [EtcdRequestOp], into bytes: inout [UInt8]) {
        for (index, op) in ops.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            guard case .put(let put) = op, put.lease == 0, !put.prevKV else {
                JSONWriter.write(op.json, into: &bytes)
                continue
            }
            bytes += #"{"request_put":{"key":""#.utf8
            Base64.encode(put.key, into: &bytes)
            bytes += #"","value":""#.utf8
            Base64.encode(put.value, into: &bytes)
            bytes += #""}}"#.utf8
        }
    }

    /// About the bytes the op takes in a body, to reserve them at once.
    var estimatedBodyBytes: Int {
        guard case .put(let put) = self else { return 96 }
        return 48 + (put.key.count + put.value.count) * 4 / 3
    }
}
