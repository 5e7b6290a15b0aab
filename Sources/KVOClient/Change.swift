import Foundation

/// One change reaching one observation: KVO's change dictionary as a value.
///
/// Which fields are set follows the observation's options, as in KVO and
/// docs/PROTOCOL.md: ``new`` only with `.new` (never on prior changes, not on
/// removals), ``old`` only with `.old` (not on insertions). A value that is
/// missing in the document is `.null`; a field that was not asked for is `nil`.
public struct Change: Sendable, Hashable {
    /// The observed object's name.
    public var object: String
    /// The observed key path (not necessarily where the change happened: a
    /// change under it, or of an ancestor, reaches it as a `setting`; see
    /// ``changedKeyPath``). nil for an observation of the whole document,
    /// whose ``new`` and ``old`` are the whole document (`null` when the
    /// object does not exist).
    public var keyPath: String?
    /// What happened: a setting, or an insertion, removal or replacement in an array.
    public var kind: ChangeKind
    /// The value after the change; for insertions and replacements, the array of new elements.
    public var new: JSONValue?
    /// The value before the change; for removals and replacements, the array of old elements.
    public var old: JSONValue?
    /// The array positions touched, ascending, for insertion, removal and replacement.
    public var indexes: [Int]?
    /// Sent before the change is applied (option `.prior`).
    public var isPrior: Bool
    /// The change sent when observing begins (option `.initial`).
    public var isInitial: Bool
    /// The daemon-wide sequence number of the change (for an initial change, see docs/CLIENT.md).
    public var seq: UInt64
    /// The context given when observing, if any.
    public var context: JSONValue?
    /// The key path the change was made at, as the request named it, when
    /// that is not ``keyPath`` (a change under the observed key path, of an
    /// ancestor, or of a part of the observed whole document); nil when the
    /// change was made at ``keyPath`` itself or to the whole document.
    public var changedKeyPath: String?
    /// For a prefix observation, its prefix (``object`` names the object
    /// under it that changed); nil otherwise.
    public var prefix: String?
    /// Set when kvod deleted the value itself: its owner disconnected
    /// (``ChangeCause/disconnect``) or its ttl passed (``ChangeCause/ttl``); nil for a client's change.
    public var cause: ChangeCause?
    /// The epoch (the history) ``seq`` counts in, as kvod named it when this
    /// connection registered the observation; nil only for a change replayed
    /// after a resume from a seq without an epoch, before kvod's reply.
    public var epoch: String?
    /// How many earlier changes of this observation kvod dropped in favour of
    /// this one, which stands for them: the observation is throttled
    /// (``DeliveryOptions/throttle``) or this connection fell behind
    /// (docs/PROTOCOL.md, "Slow readers"). nil when none was dropped.
    public var coalesced: Int?

    /// Where to resume so as to get the changes after this one: its ``seq``
    /// and ``epoch``; nil for a prior change (resuming from it would skip the
    /// change it announces). Keep the point of the last change handled and
    /// pass it as `since`. For a stream of several key paths, one change
    /// can reach several of them with one seq, and a replay comes key path
    /// by key path: resume each key path from its own point.
    public var resumePoint: ResumePoint? {
        isPrior ? nil : ResumePoint(seq: seq, epoch: epoch)
    }

    /// A change with these fields, for tests and for code that stands in for a connection.
    public init(object: String, keyPath: String?, kind: ChangeKind, new: JSONValue? = nil, old: JSONValue? = nil,
                indexes: [Int]? = nil, isPrior: Bool = false, isInitial: Bool = false, seq: UInt64,
                context: JSONValue? = nil, changedKeyPath: String? = nil, prefix: String? = nil,
                cause: ChangeCause? = nil, epoch: String? = nil, coalesced: Int? = nil) {
        self.object = object
        self.keyPath = keyPath
        self.kind = kind
        self.new = new
        self.old = old
        self.indexes = indexes
        self.isPrior = isPrior
        self.isInitial = isInitial
        self.seq = seq
        self.context = context
        self.changedKeyPath = changedKeyPath
        self.prefix = prefix
        self.cause = cause
        self.epoch = epoch
        self.coalesced = coalesced
    }

    /// ``new`` decoded as `T`; nil when ``new`` is nil or `null`.
    public func new<T: Decodable>(as type: T.Type) throws(KVOClientError) -> T? {
        try Self.decode(new, as: type)
    }

    /// ``old`` decoded as `T`; nil when ``old`` is nil or `null`.
    public func old<T: Decodable>(as type: T.Type) throws(KVOClientError) -> T? {
        try Self.decode(old, as: type)
    }

    private static func decode<T: Decodable>(_ value: JSONValue?, as type: T.Type) throws(KVOClientError) -> T? {
        guard let value, value != .null else { return nil }
        return try JSONCoding.decode(type, from: value)
    }
}
