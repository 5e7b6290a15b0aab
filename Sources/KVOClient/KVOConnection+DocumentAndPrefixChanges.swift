extension KVOConnection {
    /// The changes of the whole document of `object`, as an `AsyncSequence`.
    ///
    /// Each change has no ``Change/keyPath``; its ``Change/new`` and
    /// ``Change/old`` are the whole document (`null` when the object does not
    /// exist), its kind is `setting`, and ``Change/changedKeyPath`` says where
    /// the change was made (nil when the whole document was set or deleted).
    ///
    /// ```swift
    /// for try await change in connection.changes(of: "person/1", options: [.new, .initial]) {
    ///     print(change.changedKeyPath ?? "(whole)", change.new ?? "–")
    /// }
    /// ```
    ///
    /// Options, delivery, `context` and `since` as in ``changes(of:keyPath:options:delivery:context:since:)``.
    public func changes(of object: String, options: ObservationOptions = [],
                        delivery: DeliveryOptions = .all, context: JSONValue? = nil, since: ResumePoint? = nil)
        -> ChangeStream
    {
        changes(of: [ObservationKey(object: object, keyPath: nil)], options: options, delivery: delivery,
                context: context, since: since)
    }

    /// The changes of `keyPath` (nil: the whole document) of every object
    /// whose name starts with `prefix`, including objects created later (the
    /// empty prefix: every object).
    ///
    /// Each change is exactly the one an observation of that single object
    /// would get (``Change/object`` names it), with ``Change/prefix`` set.
    /// With `.initial`, first one change per object that exists under the
    /// prefix, in ``list(prefix:pageSize:)`` order (`new` is `null` for an object
    /// without a value at the key path).
    ///
    /// ```swift
    /// for try await change in connection.changes(prefix: "services/", keyPath: "addr", options: [.new, .initial]) {
    ///     print(change.object, change.new ?? "–")
    /// }
    /// ```
    ///
    /// `.initial` is only for the first observer of a (prefix, key path) on
    /// one connection: a second one fails with `bad_request` (kvod sends a
    /// prefix's initial changes only when it registers the observation).
    /// With `since`, kvod replays the missed changes of every object under the prefix.
    public func changes(prefix: String, keyPath: String? = nil, options: ObservationOptions = [],
                        delivery: DeliveryOptions = .all, context: JSONValue? = nil, since: ResumePoint? = nil)
        -> ChangeStream
    {
        changes(of: [ObservationKey(object: prefix, keyPath: keyPath, isPrefix: true)], options: options,
                delivery: delivery, context: context, since: since)
    }

    /// The changes of several key paths of every object under `prefix`, in one sequence.
    public func changes(prefix: String, keyPaths: [String], options: ObservationOptions = [],
                        delivery: DeliveryOptions = .all, context: JSONValue? = nil, since: ResumePoint? = nil)
        -> ChangeStream
    {
        guard !keyPaths.isEmpty else {
            return failedStream(KVOClientError(.badRequest, "changes(prefix:keyPaths:) needs at least one key path"))
        }
        return changes(of: keyPaths.map { ObservationKey(object: prefix, keyPath: $0, isPrefix: true) },
                       options: options, delivery: delivery, context: context, since: since)
    }
}
