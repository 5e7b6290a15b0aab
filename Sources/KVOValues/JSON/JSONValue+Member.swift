extension JSONValue {
    /// The member `name` of this object; nil when it has none or is not an
    /// object. The engine's `value(at:)` of one plain name (no collection
    /// operator), without the array of keys: the replicated records and etcd's
    /// answers are read so.
    public func member(_ name: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[name]
    }
}
