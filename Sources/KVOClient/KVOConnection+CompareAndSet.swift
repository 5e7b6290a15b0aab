import KVOValues

/// Conditional writes whose failed condition is a result, not an error.
extension KVOConnection {
    /// Sets the value at `keyPath` of `object` only if the condition holds,
    /// and says which happened: ``CompareAndSetResult/applied(seq:)`` or
    /// ``CompareAndSetResult/conflict(modSeq:)`` (nothing changed). Other
    /// failures throw, as `set(_:_:to:ifModSeq:ifValue:ephemeral:ttl:)` does.
    ///
    /// ```swift
    /// func double(_ connection: KVOConnection) async throws -> Int {
    ///     while true {
    ///         let current = try await connection.getVersioned("config/web", "workers")
    ///         let doubled = try current.decode(Int.self) * 2
    ///         let result = try await connection.compareAndSet("config/web", "workers", to: doubled,
    ///                                                         ifModSeq: current.modSeq)
    ///         if result.isApplied { return doubled }  // else someone was faster: read again
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - object: the object's name.
    ///   - keyPath: where in the document.
    ///   - value: the value, encoded by Foundation's `JSONEncoder`.
    ///   - ifModSeq: apply only if the key path's modSeq is this (`0`: only if nothing is there).
    ///   - ifValue: apply only if the current value equals this JSON.
    ///   - ephemeral: the value goes when this connection closes, as for a set.
    ///   - ttl: the value goes this long after the write unless changed again, as for a set.
    public func compareAndSet(_ object: String, _ keyPath: String, to value: some Encodable,
                              ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil, ephemeral: Bool = false,
                              ttl: Duration? = nil) async throws(KVOClientError) -> CompareAndSetResult {
        try await compareAndPerform(.set(object, keyPath, encoded: try JSONCoding.encode(value), ifModSeq: ifModSeq,
                                         ifValue: ifValue, ephemeral: ephemeral, ttl: ttl))
    }

    /// The same with a JSON value, sent exactly as given.
    public func compareAndSet(_ object: String, _ keyPath: String, to value: JSONValue,
                              ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil, ephemeral: Bool = false,
                              ttl: Duration? = nil) async throws(KVOClientError) -> CompareAndSetResult {
        try await compareAndPerform(.set(object, keyPath, to: value, ifModSeq: ifModSeq, ifValue: ifValue,
                                         ephemeral: ephemeral, ttl: ttl))
    }

    /// Sends one change op with its conditions (a delete, an insert, …) and
    /// returns ``CompareAndSetResult/conflict(modSeq:)`` when one does not
    /// hold, where ``perform(_:)`` throws `precondition_failed`.
    public func compareAndPerform(_ operation: WriteOperation) async throws(KVOClientError) -> CompareAndSetResult {
        // A Result, not `catch … where` in this value-returning function: the form that crashes Swift 6.3.
        let outcome: Result<UInt64, KVOClientError>
        do { outcome = .success(try await perform(operation)) } catch { outcome = .failure(error) }
        switch outcome {
        case .success(let seq): return .applied(seq: seq)
        case .failure(let error) where error.code == .preconditionFailed: return .conflict(modSeq: error.modSeq ?? 0)
        case .failure(let error): throw error
        }
    }
}
