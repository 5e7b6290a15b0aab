import KVOValues

/// One change a watch saw: etcd's `Event`.
public struct EtcdWatchEvent: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case put, delete }

    public var kind: Kind
    /// The key after the change; for a deletion, the key with its `modRevision`
    /// the deletion's revision and an empty value.
    public var kv: EtcdKeyValue
    /// The key before the change, when the watch asked for `prevKV` and it existed.
    public var prevKV: EtcdKeyValue?
}

/// What a watch reports, in the order etcd sent it.
public enum EtcdWatchUpdate: Sendable, Equatable {
    /// The watch is in place; the header's revision is the store's at that moment.
    case created(EtcdResponseHeader)
    /// Changes of one or more revisions, in revision order (a fragmented
    /// response arrives whole, its fragments joined).
    case events(EtcdResponseHeader, [EtcdWatchEvent])
    /// A progress notification: the store is at `revision` and the watch has
    /// nothing newer to send (see ``EtcdWatch/lastRevision`` for why it is not a resume point).
    case progress(revision: Int64)
    /// The start revision was compacted away (etcd #9386): the watch is over;
    /// history before `compactRevision` is gone, so the watcher must re-read
    /// the keys and watch again from the read's revision. Never the end of
    /// interest, only of this watch.
    case compacted(compactRevision: Int64)
    /// etcd cancelled the watch for another reason (its message).
    case cancelled(reason: String)
    /// The stream ended: the member went away, or answered an error. The
    /// watcher resumes from the revision after the last one it saw.
    case ended(EtcdError)
}

/// How a watch starts: etcd's `WatchCreateRequest`.
public struct EtcdWatchRequest: Sendable, Equatable {
    public var range: EtcdKeyRange
    /// The first revision to report (0: changes after now).
    public var startRevision: Int64
    /// Each event carries the key as it was before.
    public var prevKV: Bool
    /// etcd sends progress notifications to an idle watch.
    public var progressNotify: Bool
    /// Large responses arrive in fragments, so none exceeds etcd's message limit.
    public var fragment: Bool

    public init(_ range: EtcdKeyRange, startRevision: Int64 = 0, prevKV: Bool = true,
                progressNotify: Bool = true, fragment: Bool = true) {
        self.range = range
        self.startRevision = startRevision
        self.prevKV = prevKV
        self.progressNotify = progressNotify
        self.fragment = fragment
    }

    var json: JSONValue {
        var create: JSONObject = ["key": .bytes(range.key)]
        if !range.rangeEnd.isEmpty { create["range_end"] = .bytes(range.rangeEnd) }
        if startRevision != 0 { create["start_revision"] = .int64(startRevision) }
        if prevKV { create["prev_kv"] = true }
        if progressNotify { create["progress_notify"] = true }
        if fragment { create["fragment"] = true }
        return ["create_request": .object(create)]
    }
}
