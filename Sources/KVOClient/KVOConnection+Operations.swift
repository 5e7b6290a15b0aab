import KVOValues
import KVOProtocol

/// The protocol's operations as async calls (docs/PROTOCOL.md, "Operations").
///
/// Values go out through `Encodable` (Foundation's `JSONEncoder`) or as a
/// ``JSONValue``, and come back through `Decodable` or as a ``JSONValue``.
/// A daemon error throws ``KVOClientError`` with its code and message; no
/// reply within the configuration's ``Configuration/requestTimeout`` throws
/// `KVOClientError.Code.timedOut`. Cancelling the calling task
/// does not withdraw a request that was sent.
extension KVOConnection {
    /// Sets the value at `keyPath` of `object`, creating missing intermediate objects.
    ///
    /// With `ifModSeq`/`ifValue` the set applies only if they hold (else
    /// `KVOClientError.Code.preconditionFailed`); `ephemeral` and
    /// `ttl` bound the value's life (see ``WriteOperation``).
    /// - Returns: the change's seq.
    @discardableResult
    public func set(_ object: String, _ keyPath: String, to value: some Encodable,
                    ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil, ephemeral: Bool = false,
                    ttl: Duration? = nil) async throws(KVOClientError) -> UInt64 {
        try await perform(.set(object, keyPath, encoded: try JSONCoding.encode(value), ifModSeq: ifModSeq,
                               ifValue: ifValue, ephemeral: ephemeral, ttl: ttl))
    }

    /// Sets the value at `keyPath` of `object` to a JSON value, exactly as given.
    @discardableResult
    public func set(_ object: String, _ keyPath: String, to value: JSONValue,
                    ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil, ephemeral: Bool = false,
                    ttl: Duration? = nil) async throws(KVOClientError) -> UInt64 {
        try await perform(.set(object, keyPath, to: value, ifModSeq: ifModSeq, ifValue: ifValue,
                               ephemeral: ephemeral, ttl: ttl))
    }

    /// Replaces the whole document of `object` (creating the object);
    /// `value` must encode as a JSON object, else `not_an_object`.
    /// - Returns: the change's seq.
    @discardableResult
    public func setDocument(_ object: String, to value: some Encodable,
                            ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil) async throws(KVOClientError) -> UInt64 {
        try await perform(.set(object, nil, encoded: try JSONCoding.encode(value), ifModSeq: ifModSeq,
                               ifValue: ifValue, ephemeral: false, ttl: nil))
    }

    /// Replaces the whole document of `object` with a JSON object, exactly as given.
    @discardableResult
    public func setDocument(_ object: String, to value: JSONValue,
                            ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil) async throws(KVOClientError) -> UInt64 {
        try await perform(.set(object, nil, to: value, ifModSeq: ifModSeq, ifValue: ifValue))
    }

    /// The value at `keyPath` (nil: the whole document) decoded as `T`.
    /// Throws `not_found` when there is none.
    public func get<T: Decodable>(_ type: T.Type, _ object: String, _ keyPath: String? = nil)
        async throws(KVOClientError) -> T
    {
        try JSONCoding.decode(type, from: try await get(object, keyPath))
    }

    /// The value at `keyPath` (nil: the whole document) as JSON. Throws `not_found` when there is none.
    public func get(_ object: String, _ keyPath: String? = nil) async throws(KVOClientError) -> JSONValue {
        try await getVersioned(object, keyPath).value
    }

    /// The value at `keyPath` (nil: the whole document) with its modSeq, the
    /// seq to give as `ifModSeq` to change it only if nobody changed it since.
    /// Throws `not_found` (whose ``KVOClientError/modSeq`` is 0) when there is none.
    public func getVersioned(_ object: String, _ keyPath: String? = nil)
        async throws(KVOClientError) -> VersionedValue
    {
        try await request(RequestEncoder(op: .get, object: object, keyPath: keyPath), "get", read: VersionedValue.init)
    }

    /// Deletes the value at `keyPath`, or the whole object when `keyPath` is nil.
    /// Deleting what is not there succeeds and changes nothing.
    /// - Returns: the change's seq (the current seq when nothing changed).
    @discardableResult
    public func delete(_ object: String, _ keyPath: String? = nil,
                       ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil) async throws(KVOClientError) -> UInt64 {
        try await perform(.delete(object, keyPath, ifModSeq: ifModSeq, ifValue: ifValue))
    }

    /// Inserts `values` into the array at `keyPath` (created if missing) at
    /// `index`, or appends them when `index` is nil.
    @discardableResult
    public func insert(_ object: String, _ keyPath: String, _ values: [some Encodable], at index: Int? = nil,
                       ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil) async throws(KVOClientError) -> UInt64 {
        try await perform(.insert(object, keyPath, encoded: try JSONCoding.encode(values), at: index,
                                  ifModSeq: ifModSeq, ifValue: ifValue))
    }

    /// Inserts JSON values, exactly as given, into the array at `keyPath`.
    @discardableResult
    public func insert(_ object: String, _ keyPath: String, _ values: [JSONValue], at index: Int? = nil,
                       ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil) async throws(KVOClientError) -> UInt64 {
        try await perform(.insert(object, keyPath, values, at: index, ifModSeq: ifModSeq, ifValue: ifValue))
    }

    /// Removes the elements at `indexes` (positions before the change) from the array at `keyPath`.
    @discardableResult
    public func remove(_ object: String, _ keyPath: String, at indexes: [Int],
                       ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil) async throws(KVOClientError) -> UInt64 {
        try await perform(.remove(object, keyPath, at: indexes, ifModSeq: ifModSeq, ifValue: ifValue))
    }

    /// Replaces the elements at `indexes` by `values`, pairwise.
    @discardableResult
    public func replace(_ object: String, _ keyPath: String, at indexes: [Int], with values: [some Encodable],
                        ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil) async throws(KVOClientError) -> UInt64 {
        try await perform(.replace(object, keyPath, at: indexes, encoded: try JSONCoding.encode(values),
                                   ifModSeq: ifModSeq, ifValue: ifValue))
    }

    /// Replaces the elements at `indexes` by JSON values, pairwise.
    @discardableResult
    public func replace(_ object: String, _ keyPath: String, at indexes: [Int], with values: [JSONValue],
                        ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil) async throws(KVOClientError) -> UInt64 {
        try await perform(.replace(object, keyPath, at: indexes, with: values, ifModSeq: ifModSeq, ifValue: ifValue))
    }

    /// Adds `amount` to the integer at `keyPath` of `object` in one change,
    /// however many clients add at once: a counter without a compare-and-set
    /// loop. Nothing there counts as 0, and missing objects on the way are
    /// made, as by a set.
    ///
    /// ```swift
    /// let hits = try await connection.add("stats/web", "hits")        // 1, 2, 3, …
    /// let left = try await connection.add("quota/alice", "bytes", by: -4096)
    /// ```
    ///
    /// The value there and the sum must be integers (no fraction or exponent)
    /// within ±2^53, where a double still holds them exactly; else the call
    /// throws `KVOClientError.Code.badRequest`, naming the
    /// value, and nothing changes. It needs the right to read the object as
    /// well as to write it. With `ifModSeq`/`ifValue` it applies only if they
    /// hold (else `KVOClientError.Code.preconditionFailed`);
    /// `ttl` as for a set (see ``WriteOperation/add(_:_:by:ifModSeq:ifValue:ttl:)``, which
    /// ``perform(_:)`` sends for the change's seq instead of the sum).
    /// - Returns: the sum, as now stored.
    @discardableResult
    public func add(_ object: String, _ keyPath: String, by amount: Int = 1, ifModSeq: UInt64? = nil,
                    ifValue: JSONValue? = nil, ttl: Duration? = nil) async throws(KVOClientError) -> Int {
        try await request(WriteOperation.add(object, keyPath, by: amount, ifModSeq: ifModSeq, ifValue: ifValue,
                                             ttl: ttl).line, "add") { $0.integer(.value) }
    }

    /// Sends one change op.
    /// - Returns: the change's seq (the current seq when nothing changed).
    @discardableResult
    public func perform(_ operation: WriteOperation) async throws(KVOClientError) -> UInt64 {
        try await request(operation.line, "a change") { $0.unsigned(.seq) }
    }

    /// Round-trips a `ping`.
    public func ping() async throws(KVOClientError) {
        _ = try await request(RequestEncoder(op: .ping))
    }

    /// The daemon's counters.
    public func info() async throws(KVOClientError) -> DaemonInfo {
        try await request(RequestEncoder(op: .info), "info", read: DaemonInfo.init)
    }

    /// The daemon's metrics in Prometheus's text format (exposition format
    /// 0.0.4), as kvod rendered them: one metric a line, ending with a newline.
    public func metrics() async throws(KVOClientError) -> String {
        try await request(RequestEncoder(op: .metrics), "metrics") { reply in
            if case .string(let text)? = reply[.text] { text } else { nil }
        }
    }

    /// Sends `request` and reads its reply with `read`: a reply it cannot read (nil) is a malformed reply to `op`.
    func request<Reply>(_ request: RequestEncoder, _ op: String, read: (JSONObject) -> Reply?)
        async throws(KVOClientError) -> Reply
    {
        let reply = try await self.request(request)
        guard let value = read(reply) else { throw Self.malformed(op, reply) }
        return value
    }

    static func malformed(_ op: String, _ reply: JSONObject) -> KVOClientError {
        KVOClientError(.protocolViolation, "kvod's reply to \(op) is malformed: \(JSONValue.object(reply).jsonString)")
    }
}
