import Foundation

/// etcd's side of ``Wire``: puts and watches through its JSON gateway over
/// HTTP/1.1 keep-alive (`/v3/kv/put`, `/v3/watch`), the Go-free client the
/// cluster benchmark measures etcd with. A key `(object, keyPath)` is the etcd
/// key `/bench/<object>.<keyPath>`; keys and values travel in base64.
extension Wire {
    /// Where the benchmark's etcd keys lie.
    static let etcdPrefix = "/bench/"

    static func etcdKey(_ key: BenchKey) -> String { etcdPrefix + key.redisKey }

    /// `{"key":"<base64>","value":"`: a put's body up to its value.
    static func etcdPutPrefix(_ key: BenchKey) -> [UInt8] {
        Array(#"{"key":""#.utf8) + Data(etcdKey(key).utf8).base64EncodedData() + Array(#"","value":""#.utf8)
    }

    private static let putStart = Array(
        "POST /v3/kv/put HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ".utf8)

    /// A whole put request: headers, then `prefix`, the payload in base64, `"}`.
    static func appendEtcdPut(prefix: [UInt8], index: Int, sentAt: UInt64, into bytes: inout [UInt8]) {
        var payload: [UInt8] = []
        appendDecimal(UInt64(index), to: &payload)
        payload.append(UInt8(ascii: ","))
        appendDecimal(sentAt, to: &payload)
        let value = Data(payload).base64EncodedData()
        bytes.append(contentsOf: putStart)
        appendDecimal(UInt64(prefix.count + value.count + 2), to: &bytes)
        bytes.append(contentsOf: [13, 10, 13, 10])
        bytes.append(contentsOf: prefix)
        bytes.append(contentsOf: value)
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: "}")])
    }

    private static let txnStart = Array(
        "POST /v3/kv/txn HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ".utf8)

    /// A whole `Txn` request of a put per element of `puts` (each `prefix`
    /// from ``etcdPutPrefix(_:)`` and its payload's index), no compare: etcd's
    /// own way to commit many puts at one revision.
    static func appendEtcdTxn(puts: some Collection<(prefix: [UInt8], index: Int)>, sentAt: UInt64,
                              into bytes: inout [UInt8]) {
        var body = Array(#"{"success":["#.utf8)
        var payload: [UInt8] = []
        for (offset, put) in puts.enumerated() {
            if offset > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: #"{"request_put":"#.utf8)
            body.append(contentsOf: put.prefix)
            payload.removeAll(keepingCapacity: true)
            appendDecimal(UInt64(put.index), to: &payload)
            payload.append(UInt8(ascii: ","))
            appendDecimal(sentAt, to: &payload)
            body.append(contentsOf: Data(payload).base64EncodedData())
            body.append(contentsOf: #""}}"#.utf8)
        }
        body.append(contentsOf: "]}".utf8)
        bytes.append(contentsOf: txnStart)
        appendDecimal(UInt64(body.count), to: &bytes)
        bytes.append(contentsOf: [13, 10, 13, 10])
        bytes.append(contentsOf: body)
    }

    /// A watch of `key`, or of the range [key, rangeEnd): a stream that stays open.
    static func etcdWatchRequest(key: String, rangeEnd: String?) -> [UInt8] {
        var body = Array(#"{"create_request":{"key":""#.utf8) + Data(key.utf8).base64EncodedData()
        if let rangeEnd { body += Array(#"","range_end":""#.utf8) + Data(rangeEnd.utf8).base64EncodedData() }
        body += Array(#""}}"#.utf8)
        return Array("POST /v3/watch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
            + body
    }

    /// A watch of every key that starts with `prefix` (ASCII; its last byte is not 0xFF).
    static func etcdWatchPrefixRequest(_ prefix: String) -> [UInt8] {
        var end = Array(prefix.utf8)
        end[end.count - 1] += 1
        return etcdWatchRequest(key: prefix, rangeEnd: String(decoding: end, as: UTF8.self))
    }
}
