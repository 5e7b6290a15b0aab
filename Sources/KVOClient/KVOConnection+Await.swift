import KVOValues
import KVOProtocol

/// Writes that wait for their observers (docs/PROTOCOL.md,
/// "Acknowledgements and `await`"): the change applies at once, and the call
/// returns once its events were written to, or acknowledged by, the matching
/// observers, or throws `KVOClientError.Code.timeout` with the counts.
///
/// kvod reads no further request of this connection while the reply waits,
/// so requests made meanwhile on the same ``KVOConnection`` wait behind it
/// (other connections are never held up). An agent that acknowledges and
/// also writes with `await` is best given two connections: its own acks wait
/// too, and hold up other writers' awaits.
extension KVOConnection {
    /// Sends one change op and waits as `condition` says.
    ///
    /// ```swift
    /// let receipt = try await connection.perform(.set("config", "version", to: 42), await: .acknowledged)
    /// ```
    /// - Returns: the change's seq, and how many observers were waited for and satisfied.
    @discardableResult
    public func perform(_ operation: WriteOperation, await condition: AwaitCondition)
        async throws(KVOClientError) -> AwaitedWrite
    {
        var line = operation.line
        condition.addFields(to: &line)
        let reply = try await request(line, extraTime: condition.timeout)
        return try Self.awaited(reply, seqs: nil)
    }

    /// ``batch(_:)``, waiting as `condition` says for the events of every op.
    @discardableResult
    public func batch(_ operations: [WriteOperation], await condition: AwaitCondition)
        async throws(KVOClientError) -> AwaitedWrite
    {
        var line = Self.batchLine(operations)
        condition.addFields(to: &line)
        let reply = try await request(line, extraTime: condition.timeout)
        guard let result = BatchResult(reply, count: operations.count) else { throw Self.malformed("batch", reply) }
        return try Self.awaited(reply, seqs: result.seqs)
    }

    /// Sets the value at `keyPath` of `object` to a JSON value and waits as `condition` says.
    @discardableResult
    public func set(_ object: String, _ keyPath: String, to value: JSONValue, await condition: AwaitCondition)
        async throws(KVOClientError) -> AwaitedWrite
    {
        try await perform(.set(object, keyPath, to: value), await: condition)
    }

    /// Sets the value at `keyPath` of `object` (any `Encodable`) and waits as `condition` says.
    @discardableResult
    public func set(_ object: String, _ keyPath: String, to value: some Encodable, await condition: AwaitCondition)
        async throws(KVOClientError) -> AwaitedWrite
    {
        try await perform(try .set(object, keyPath, to: value), await: condition)
    }

    private static func awaited(_ reply: JSONObject, seqs: [UInt64?]?) throws(KVOClientError) -> AwaitedWrite {
        guard let observers = reply.integer(.observers), let acknowledged = reply.integer(.acknowledged)
        else { throw malformed("an awaited change (a kvod without await?)", reply) }
        guard let seq = reply.unsigned(.seq) else { throw malformed("a change", reply) }
        return AwaitedWrite(seq: seq, seqs: seqs, observers: observers, acknowledged: acknowledged)
    }
}
