import KVOValues
import KVOProtocol

/// Listing the objects under a prefix (`list`, docs/PROTOCOL.md).
extension KVOConnection {
    /// The largest page kvod serves (a larger `limit` is `limit_exceeded`).
    public static let maximumListLimit = 10_000

    /// The names of every existing object whose name starts with `prefix`
    /// (the empty prefix: every object), ascending by UTF-8 bytes.
    ///
    /// Pages through kvod with `after` until no more names follow, so the
    /// result is not one snapshot: an object created or deleted meanwhile
    /// may or may not be in it.
    ///
    /// ```swift
    /// let services = try await connection.list(prefix: "services/")
    /// ```
    public func list(prefix: String = "", pageSize: Int = 1000) async throws(KVOClientError) -> [String] {
        var names: [String] = []
        var after: String?
        while true {
            let page = try await listPage(prefix: prefix, after: after, limit: pageSize)
            names += page.objects
            guard page.more, let last = page.objects.last else { return names }
            after = last
        }
    }

    /// One page of names under `prefix` that come after `after` (exclusive;
    /// nil: from the start), at most `limit` (nil: kvod's default, 1000; at
    /// most ``maximumListLimit``).
    public func listPage(prefix: String = "", after: String? = nil, limit: Int? = nil)
        async throws(KVOClientError) -> ObjectPage
    {
        var line = RequestEncoder(op: .list)
        line.string(.prefix, prefix)
        if let after { line.string(.after, after) }
        if let limit { line.integer(.limit, limit) }
        return try await request(line, "list", read: ObjectPage.init)
    }
}
