import KVOValues
import KVOProtocol

/// One page of a `list`: object names in ascending UTF-8 byte order.
public struct ObjectPage: Sendable, Hashable {
    /// The names, ascending by UTF-8 bytes.
    public var objects: [String]
    /// Whether at least one more matching name follows the last one in ``objects``.
    public var more: Bool
    /// The seq the listing reflects.
    public var seq: UInt64

    init?(_ reply: JSONObject) {
        guard case .array(let names)? = reply[.objects], case .bool(let more)? = reply[.more] else { return nil }
        var objects: [String] = []
        objects.reserveCapacity(names.count)
        for name in names {
            guard case .string(let text) = name else { return nil }
            objects.append(text)
        }
        self.objects = objects
        self.more = more
        guard let seq = reply.unsigned(.seq) else { return nil }
        self.seq = seq
    }
}
