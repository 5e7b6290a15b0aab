/// A key or a range of keys: etcd's `key` and `range_end` pair.
public struct EtcdKeyRange: Sendable, Equatable {
    public var key: [UInt8]
    /// Exclusive end; empty: the single key `key`.
    public var rangeEnd: [UInt8]

    public init(key: [UInt8], rangeEnd: [UInt8] = []) {
        self.key = key
        self.rangeEnd = rangeEnd
    }

    /// The one key `key`.
    public static func key(_ key: String) -> Self { Self(key: Array(key.utf8)) }

    /// Every key that starts with `prefix`.
    public static func prefix(_ prefix: String) -> Self { Self.prefix(Array(prefix.utf8)) }

    /// Every key that starts with `prefix`: the range end is the prefix with its
    /// last byte below 0xFF incremented (etcd's own rule; "\0" for every key).
    public static func prefix(_ prefix: [UInt8]) -> Self {
        var end = prefix
        while let last = end.last {
            if last < 0xFF {
                end[end.count - 1] = last + 1
                return Self(key: prefix, rangeEnd: end)
            }
            end.removeLast()
        }
        return Self(key: prefix, rangeEnd: [0])
    }
}
