import KVOEngine

/// The protocol's operations as async calls (docs/PROTOCOL.md, "Operations").
///
/// Values go out through `Encodable` (Foundation's `JSONEncoder`) or as a
/// ``JSONValue``, and come back through `Decodable` or as a ``JSONValue``.
/// A daemon error throws ``KVOClientError`` with its code and message; no
/// reply within the configuration's ``Configuration/requestTimeout`` throws
/// ``KVOClientError/Code-swift.struct/timedOut``. Cancelling the calling task
/// does not withdraw a request that was sent.
extension KVOConnection {
    /// Sets the value at `keyPath` of `object`, creating missing intermediate objects.
    /// - Returns: the change's seq.
    @discardableResult
    public func set(_ object: String, _ keyPath: String, to value: some Encodable)
        async throws(KVOClientError) -> UInt64
    {
        try await set(object, keyPath, encoded: try JSONCoding.encode(value))
    }

    /// Sets the value at `keyPath` of `object` to a JSON value, exactly as given.
    @discardableResult
    public func set(_ object: String, _ keyPath: String, to value: JSONValue) async throws(KVOClientError) -> UInt64 {
        try await set(object, keyPath, encoded: value.jsonBytes)
    }

    /// Replaces the whole document of `object` (creating the object);
    /// `value` must encode as a JSON object, else `not_an_object`.
    /// - Returns: the change's seq.
    @discardableResult
    public func setDocument(_ object: String, to value: some Encodable) async throws(KVOClientError) -> UInt64 {
        try await set(object, nil, encoded: try JSONCoding.encode(value))
    }

    /// Replaces the whole document of `object` with a JSON object, exactly as given.
    @discardableResult
    public func setDocument(_ object: String, to value: JSONValue) async throws(KVOClientError) -> UInt64 {
        try await set(object, nil, encoded: value.jsonBytes)
    }

    private func set(_ object: String, _ keyPath: String?, encoded: [UInt8]) async throws(KVOClientError) -> UInt64 {
        var line = RequestLine(op: "set", object: object, keyPath: keyPath)
        line.encoded("value", encoded)
        return try Self.seq(of: try await request(line))
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
        let reply = try await request(RequestLine(op: "get", object: object, keyPath: keyPath))
        guard let value = reply["value"] else { throw Self.malformed("get", reply) }
        return value
    }

    /// Deletes the value at `keyPath`, or the whole object when `keyPath` is nil.
    /// Deleting what is not there succeeds and changes nothing.
    /// - Returns: the change's seq (the current seq when nothing changed).
    @discardableResult
    public func delete(_ object: String, _ keyPath: String? = nil) async throws(KVOClientError) -> UInt64 {
        try Self.seq(of: try await request(RequestLine(op: "delete", object: object, keyPath: keyPath)))
    }

    /// Inserts `values` into the array at `keyPath` (created if missing) at
    /// `index`, or appends them when `index` is nil.
    @discardableResult
    public func insert(_ object: String, _ keyPath: String, _ values: [some Encodable], at index: Int? = nil)
        async throws(KVOClientError) -> UInt64
    {
        try await insert(object, keyPath, encoded: try JSONCoding.encode(values), at: index)
    }

    /// Inserts JSON values, exactly as given, into the array at `keyPath`.
    @discardableResult
    public func insert(_ object: String, _ keyPath: String, _ values: [JSONValue], at index: Int? = nil)
        async throws(KVOClientError) -> UInt64
    {
        try await insert(object, keyPath, encoded: JSONValue.array(values).jsonBytes, at: index)
    }

    private func insert(_ object: String, _ keyPath: String, encoded: [UInt8], at index: Int?)
        async throws(KVOClientError) -> UInt64
    {
        var line = RequestLine(op: "insert", object: object, keyPath: keyPath)
        if let index { line.integer("index", index) }
        line.encoded("values", encoded)
        return try Self.seq(of: try await request(line))
    }

    /// Removes the elements at `indexes` (positions before the change) from the array at `keyPath`.
    @discardableResult
    public func remove(_ object: String, _ keyPath: String, at indexes: [Int]) async throws(KVOClientError) -> UInt64 {
        var line = RequestLine(op: "remove", object: object, keyPath: keyPath)
        line.value("indexes", .array(indexes.map { .number(JSONNumber($0)) }))
        return try Self.seq(of: try await request(line))
    }

    /// Replaces the elements at `indexes` by `values`, pairwise.
    @discardableResult
    public func replace(_ object: String, _ keyPath: String, at indexes: [Int], with values: [some Encodable])
        async throws(KVOClientError) -> UInt64
    {
        try await replace(object, keyPath, at: indexes, encoded: try JSONCoding.encode(values))
    }

    /// Replaces the elements at `indexes` by JSON values, pairwise.
    @discardableResult
    public func replace(_ object: String, _ keyPath: String, at indexes: [Int], with values: [JSONValue])
        async throws(KVOClientError) -> UInt64
    {
        try await replace(object, keyPath, at: indexes, encoded: JSONValue.array(values).jsonBytes)
    }

    private func replace(_ object: String, _ keyPath: String, at indexes: [Int], encoded: [UInt8])
        async throws(KVOClientError) -> UInt64
    {
        var line = RequestLine(op: "replace", object: object, keyPath: keyPath)
        line.value("indexes", .array(indexes.map { .number(JSONNumber($0)) }))
        line.encoded("values", encoded)
        return try Self.seq(of: try await request(line))
    }

    /// Round-trips a `ping`.
    public func ping() async throws(KVOClientError) {
        _ = try await request(RequestLine(op: "ping"))
    }

    /// The daemon's counters.
    public func info() async throws(KVOClientError) -> DaemonInfo {
        let reply = try await request(RequestLine(op: "info"))
        guard let info = DaemonInfo(reply) else { throw Self.malformed("info", reply) }
        return info
    }

    /// This connection's observations as the daemon holds them (one per
    /// observed key path, however many local observers share it).
    public func observations() async throws(KVOClientError) -> [ObservationRecord] {
        let reply = try await request(RequestLine(op: "observations"))
        guard case .array(let list)? = reply["observations"] else { throw Self.malformed("observations", reply) }
        var records: [ObservationRecord] = []
        for element in list {
            guard let record = ObservationRecord(element) else { throw Self.malformed("observations", reply) }
            records.append(record)
        }
        return records
    }

    private static func seq(of reply: JSONObject) throws(KVOClientError) -> UInt64 {
        guard case .number(let number)? = reply["seq"], let seq = UInt64(number.literal) else {
            throw malformed("a change", reply)
        }
        return seq
    }

    static func malformed(_ op: String, _ reply: JSONObject) -> KVOClientError {
        KVOClientError(.protocolViolation, "kvod's reply to \(op) is malformed: \(JSONValue.object(reply).jsonString)")
    }
}
