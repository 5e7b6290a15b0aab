extension KVOConnection {
    /// The changes of `keyPath` of `object`, as an `AsyncSequence`.
    ///
    /// ```swift
    /// for try await change in connection.changes(of: "person/1", keyPath: "name", options: [.new, .initial]) {
    ///     print(change.new ?? "–")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - options: `.new` and `.old` put the values in each change, `.initial`
    ///     sends the current value first, `.prior` adds a change before each one
    ///     is applied (KVO's options).
    ///   - context: any JSON, handed back in every change.
    public func changes(of object: String, keyPath: String, options: ObservationOptions = [],
                        context: JSONValue? = nil) -> ChangeStream {
        changes(of: object, keyPaths: [keyPath], options: options, context: context)
    }

    /// The changes of several key paths of `object`, in one sequence, in the
    /// order the daemon sent them.
    public func changes(of object: String, keyPaths: [String], options: ObservationOptions = [],
                        context: JSONValue? = nil) -> ChangeStream {
        let (stream, continuation) = AsyncThrowingStream<Change, any Error>.makeStream()
        let sink = StreamSink(continuation)
        guard !keyPaths.isEmpty else {
            sink.finish(KVOClientError(.badRequest, "changes(of:keyPaths:) needs at least one key path"))
            return ChangeStream(base: stream, connection: self)
        }
        var seen: Set<String> = []
        let subscriptions = keyPaths.filter { seen.insert($0).inserted }.map {
            core.subscribe(ObservationKey(object: object, keyPath: $0), options: options, context: context, sink: sink)
        }
        continuation.onTermination = { [core] _ in
            for subscription in subscriptions { core.unsubscribe(subscription) }
        }
        return ChangeStream(base: stream, connection: self)
    }
}
