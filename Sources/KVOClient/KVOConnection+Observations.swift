import KVOValues
import KVOProtocol

/// Listing this connection's observations as the daemon holds them
/// (`observations`, docs/PROTOCOL.md): in pages, oldest first.
extension KVOConnection {
    /// This connection's observations as the daemon holds them (one per
    /// observed key path, however many local observers share it), oldest first.
    ///
    /// Pages through kvod with `after` until no more follow, so the result is
    /// not one snapshot: an observation made or ended meanwhile may or may
    /// not be in it; one that exists throughout is there exactly once.
    public func observations(pageSize: Int = 1000) async throws(KVOClientError) -> [ObservationRecord] {
        var records: [ObservationRecord] = []
        var after: String?
        while true {
            // The default size unsaid, so that a kvod from before pages answers too.
            let page = try await observationsPage(after: after, limit: pageSize == 1000 ? nil : pageSize)
            records += page.observations
            guard let next = page.next else { return records }
            after = next
        }
    }

    /// One page of this connection's observations, made after the one
    /// `after` names (the ``ObservationPage/next`` of the previous page; nil:
    /// from the first), at most `limit` (nil: kvod's default, 1000; at most
    /// ``maximumListLimit``).
    public func observationsPage(after: String? = nil, limit: Int? = nil)
        async throws(KVOClientError) -> ObservationPage
    {
        var line = RequestEncoder(op: .observations)
        if let after { line.string(.after, after) }
        if let limit { line.integer(.limit, limit) }
        return try await request(line, "observations", read: ObservationPage.init)
    }
}
