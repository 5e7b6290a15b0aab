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
    ///   - object: the object's name.
    ///   - keyPath: the dot-separated key path, e.g. `address.city`.
    ///   - options: `.new` and `.old` put the values in each change, `.initial`
    ///     sends the current value first, `.prior` adds a change before each one
    ///     is applied (KVO's options).
    ///   - delivery: which changes kvod sends: only real changes, only some
    ///     kinds, at most one per interval (``DeliveryOptions``); by default all.
    ///   - context: any JSON, handed back in every change.
    ///   - since: where an earlier observation stopped (the ``Change/resumePoint``
    ///     of the last change this program handled, kept across its own
    ///     restart, or ``DaemonInfo/resumePoint``): first the changes after it,
    ///     then live ones, with no gap. The stream fails with `compacted` when
    ///     kvod no longer holds them or the point's epoch is not kvod's (it
    ///     restarted without its data: the seq counts another history), and
    ///     with `bad_request` when the key path is already observed on this
    ///     connection, with `.initial`, or when the seq is in kvod's future.
    public func changes(of object: String, keyPath: String, options: ObservationOptions = [],
                        delivery: DeliveryOptions = .all, context: JSONValue? = nil, since: ResumePoint? = nil)
        -> ChangeStream
    {
        changes(of: object, keyPaths: [keyPath], options: options, delivery: delivery, context: context, since: since)
    }

    /// The changes of several key paths of `object`, in one sequence, in the
    /// order the daemon sent them (with `since`, each key path's missed
    /// changes in seq order, one key path after the other, then live ones).
    public func changes(of object: String, keyPaths: [String], options: ObservationOptions = [],
                        delivery: DeliveryOptions = .all, context: JSONValue? = nil, since: ResumePoint? = nil)
        -> ChangeStream
    {
        guard !keyPaths.isEmpty else {
            return failedStream(KVOClientError(.badRequest, "changes(of:keyPaths:) needs at least one key path"))
        }
        return changes(of: keyPaths.map { ObservationKey(object: object, keyPath: $0) }, options: options,
                       delivery: delivery, context: context, since: since)
    }

    /// One stream over the observations of `keys` (duplicates observed once).
    func changes(of keys: [ObservationKey], options: ObservationOptions, delivery: DeliveryOptions,
                 context: JSONValue?, since: ResumePoint?) -> ChangeStream {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let sink = StreamSink(continuation, limit: core.configuration.subscriberBufferLimit,
                              everyChange: delivery.everyChange)
        var seen: Set<ObservationKey> = []
        let subscriptions = keys.filter { seen.insert($0).inserted }.map {
            core.subscribe($0, options: options, delivery: delivery, context: context, since: since, sink: sink)
        }
        continuation.onTermination = { [core] _ in
            for subscription in subscriptions { core.unsubscribe(subscription) }
        }
        return ChangeStream(base: stream, sink: sink, connection: self)
    }

    /// A stream that fails at once with `error`.
    func failedStream(_ error: KVOClientError) -> ChangeStream {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let sink = StreamSink(continuation, limit: core.configuration.subscriberBufferLimit)
        sink.finish(error)
        return ChangeStream(base: stream, sink: sink, connection: self)
    }
}
