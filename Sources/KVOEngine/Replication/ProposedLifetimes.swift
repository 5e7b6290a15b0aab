/// What a proposal asks of the replicated store for values' lifetimes
/// (ephemeral, ttl), beside the document and the record (docs/CLUSTER.md).
public struct ProposedLifetimes: Sendable, Equatable {
    /// The `ephemeral` and `ttl` the set gives its value; nil: none.
    public var lifetime: ValueLifetime?
    /// The client (``ClientController/id``) that will own an ephemeral value.
    public var owner: Int?
    /// Whether the change ends the leases at or under its key path (a set or
    /// delete in an object that has leased values): their leased keys go too.
    public var endsLeases = false
}
