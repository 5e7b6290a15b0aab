import KVOValues
import KVOProtocol

/// A value as `get` returns it with what kvod knows about it: its modSeq,
/// and whether and when kvod deletes it by itself.
public struct VersionedValue: Sendable, Hashable {
    /// The value.
    public var value: JSONValue
    /// The seq of the last change at or under the value's key path: give it
    /// as `ifModSeq` to change the value only if nobody changed it since.
    public var modSeq: UInt64
    /// The seq the reply reflects (every change up to it).
    public var seq: UInt64
    /// Set with `ephemeral`: the value goes when the connection that set it closes.
    public var isEphemeral: Bool
    /// Set with `ttl`: seconds until kvod deletes the value, rounded up.
    public var expiresIn: Int?

    /// ``value`` decoded as `T`.
    public func decode<T: Decodable>(_ type: T.Type) throws(KVOClientError) -> T {
        try JSONCoding.decode(type, from: value)
    }

    init?(_ reply: JSONObject) {
        guard let value = reply[.value], let modSeq = reply.unsigned(.modSeq), let seq = reply.unsigned(.seq) else {
            return nil
        }
        self.value = value
        self.modSeq = modSeq
        self.seq = seq
        isEphemeral = reply[.ephemeral] == .bool(true)
        expiresIn = reply.integer(.expiresIn)
    }
}
