/// The servers the benchmark talks to, by the protocol a connection speaks:
/// kvod's lines, Redis's RESP, etcd's JSON gateway over HTTP/1.1 (the cluster
/// benchmark's reference, `kvod-bench cluster`).
enum Peer: String, Sendable {
    case kvod
    case redis
    case etcd

    /// The two that `kvod-bench load` compares.
    static let loadPeers: [Peer] = [.kvod, .redis]

    var displayName: String {
        switch self {
        case .kvod: "kvod"
        case .redis: "Redis"
        case .etcd: "etcd"
        }
    }
}

/// How Redis stands in for kvod's observations in a scenario.
enum RedisFlavour: Sendable {
    /// `PUBLISH channel payload` / `SUBSCRIBE channel`: Redis's cheapest fan-out, nothing stored.
    case pubSub
    /// `SET key value` / `SUBSCRIBE __keyspace@0__:key` (`notify-keyspace-events K$`):
    /// the value is stored, as kvod stores it; the event names the key but not the value.
    case keyspace
}

/// One observed key: kvod's (object, key path), Redis's key or channel `object.keyPath`.
struct BenchKey: Sendable {
    let object: String
    let keyPath: String

    var redisKey: String { object + "." + keyPath }
}

/// What a server sent: a reply to a request, or an event for an observer.
protocol InboundHandler: AnyObject {
    /// A reply; `line` is the reply's first line, for error messages.
    func reply(ok: Bool, line: UnsafeRawBufferPointer)
    /// An event. `key` is the number after the last `/` of the object (or
    /// Redis channel), -1 if none; `index` and `sentAt` come from a payload
    /// `"<index>,<sentAt>"`, -1 and 0 when the event carries no value
    /// (Redis keyspace events name the operation, not the value).
    func event(key: Int, index: Int, sentAt: UInt64)
    /// The event just passed to ``event(key:index:sentAt:)`` stands for
    /// `count` earlier ones that kvod dropped (`"coalesced":N`, a slow reader's).
    func coalesced(_ count: Int)
}


/// Appends a non-negative integer's decimal digits.
@inline(__always)
func appendDecimal(_ value: UInt64, to bytes: inout [UInt8]) {
    if value < 10 {
        bytes.append(UInt8(truncatingIfNeeded: value) &+ 48)
        return
    }
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
    withUnsafeMutableBytes(of: &digits) { buffer in
        var remaining = value
        var position = 24
        while remaining > 0 {
            position -= 1
            buffer[position] = UInt8(truncatingIfNeeded: remaining % 10) &+ 48
            remaining /= 10
        }
        bytes.append(contentsOf: buffer[position...])
    }
}

/// The number of decimal digits of `value`.
@inline(__always)
func decimalDigitCount(_ value: UInt64) -> Int {
    var count = 1
    var remaining = value
    while remaining >= 10 {
        remaining /= 10
        count += 1
    }
    return count
}
