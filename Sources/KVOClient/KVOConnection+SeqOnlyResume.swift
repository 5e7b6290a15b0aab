/// The `since:` of a bare seq, as before resume points had an epoch. A seq
/// alone is unsafe across a restart of a kvod without its data: the new kvod
/// counts a new history from 0, so the seq names other changes, and the
/// resume silently skips or repeats some. Pass a ``ResumePoint`` instead.
/// Disfavoured, so that `since: nil` still means the ``ResumePoint`` form.
extension KVOConnection {
    /// ``changes(of:keyPath:options:delivery:context:since:)`` from a seq without its epoch.
    @_disfavoredOverload
    @available(*, deprecated, message: "a seq alone is unsafe across a restart of kvod; pass change.resumePoint")
    public func changes(of object: String, keyPath: String, options: ObservationOptions = [],
                        context: JSONValue? = nil, since: UInt64?) -> ChangeStream {
        changes(of: object, keyPath: keyPath, options: options, context: context, since: Self.point(since))
    }

    /// ``changes(of:keyPaths:options:delivery:context:since:)`` from a seq without its epoch.
    @_disfavoredOverload
    @available(*, deprecated, message: "a seq alone is unsafe across a restart of kvod; pass change.resumePoint")
    public func changes(of object: String, keyPaths: [String], options: ObservationOptions = [],
                        context: JSONValue? = nil, since: UInt64?) -> ChangeStream {
        changes(of: object, keyPaths: keyPaths, options: options, context: context, since: Self.point(since))
    }

    /// ``changes(of:options:delivery:context:since:)`` from a seq without its epoch.
    @_disfavoredOverload
    @available(*, deprecated, message: "a seq alone is unsafe across a restart of kvod; pass change.resumePoint")
    public func changes(of object: String, options: ObservationOptions = [], context: JSONValue? = nil,
                        since: UInt64?) -> ChangeStream {
        changes(of: object, options: options, context: context, since: Self.point(since))
    }

    /// ``changes(prefix:keyPath:options:delivery:context:since:)`` from a seq without its epoch.
    @_disfavoredOverload
    @available(*, deprecated, message: "a seq alone is unsafe across a restart of kvod; pass change.resumePoint")
    public func changes(prefix: String, keyPath: String? = nil, options: ObservationOptions = [],
                        context: JSONValue? = nil, since: UInt64?) -> ChangeStream {
        changes(prefix: prefix, keyPath: keyPath, options: options, context: context, since: Self.point(since))
    }

    /// ``changes(prefix:keyPaths:options:delivery:context:since:)`` from a seq without its epoch.
    @_disfavoredOverload
    @available(*, deprecated, message: "a seq alone is unsafe across a restart of kvod; pass change.resumePoint")
    public func changes(prefix: String, keyPaths: [String], options: ObservationOptions = [],
                        context: JSONValue? = nil, since: UInt64?) -> ChangeStream {
        changes(prefix: prefix, keyPaths: keyPaths, options: options, context: context, since: Self.point(since))
    }

    private static func point(_ seq: UInt64?) -> ResumePoint? { seq.map { ResumePoint(seq: $0) } }
}
