import KVOValues
import KVOProtocol

/// Which of an observation's changes kvod sends (docs/PROTOCOL.md, "Quiet
/// observers"). The default, ``all``, sends every change, as KVO does.
///
/// ```swift
/// // Only real changes of the state, and progress at most five times a second.
/// let states = connection.changes(of: "sensor", keyPath: "state", options: [.new],
///                                 delivery: DeliveryOptions(distinct: true))
/// let progress = connection.changes(of: "job/7", keyPath: "done", options: [.new],
///                                   delivery: DeliveryOptions(throttle: .milliseconds(200)))
/// ```
///
/// kvod applies them, so what is filtered out never crosses the socket. kvod
/// keeps one observation per key path and connection, so observers that share
/// a connection and a key path must ask for the same delivery: a second one
/// with other settings fails with `bad_request` (observe it on another
/// ``KVOConnection``).
public struct DeliveryOptions: Sendable, Hashable {
    /// Only changes that changed the value at the observed key path (new ≠
    /// old as JSON): a set of an equal value is not sent.
    public var distinct: Bool
    /// Only changes of these kinds, as the observation sees them (an observer
    /// of an ancestor or a part of the changed path sees `setting`); nil: every kind.
    public var kinds: Set<ChangeKind>?
    /// At most one change per this interval: the first at once, the ones
    /// within the interval folded into the latest, sent when it ends with
    /// ``Change/coalesced`` saying how many it stands for. kvod takes whole
    /// milliseconds from 1 ms to 1 hour; a finer interval is rounded up, one
    /// outside those bounds fails with `bad_request`. nil: no throttle.
    public var throttle: Duration?
    /// The observer acknowledges its changes (`"ack": true`), so that a
    /// writer's `AwaitCondition.acknowledged` waits until it has acted on
    /// them. KVOClient acknowledges by itself once a change is handled: when
    /// a ``KVOController``'s block or action returns, when a stream's
    /// consumer asks for the next change, or at ``ChangeStream/AsyncIterator/acknowledge()``.
    public var acknowledges: Bool
    /// kvod sends the changes as compact events (`"compact": true`,
    /// docs/PROTOCOL.md "Compact events"): about half the bytes per change,
    /// routed by the observation's number and decoded back into the same
    /// ``Change``. The default; false asks for full events, which name the
    /// object and key path in every line (for a reader of the raw stream).
    public var compact: Bool
    /// The subscriber takes every change or none: when it falls behind, its
    /// subscription ends with `KVOClientError.Code.limitExceeded` rather
    /// than receiving the latest change per key path in place of the ones it
    /// missed. It ends when what KVOClient holds for it passes
    /// ``KVOConnection/Configuration/subscriberBufferLimit`` (after the
    /// changes held, which it still gets), and when kvod sends it a change
    /// that stands for others (``Change/coalesced``: kvod dropped changes
    /// because this connection fell behind, docs/PROTOCOL.md "Slow
    /// readers"), before that change. Other subscribers and replies go on.
    /// With a ``throttle``, which folds changes by design, observing fails
    /// with `bad_request`. KVOClient's own setting: kvod is not told, and
    /// subscribers of one key path on one connection may differ in it.
    public var everyChange: Bool

    /// Delivery with these settings; every argument left out sends more (in
    /// compact events), asks for no acknowledgements, and folds what a slow
    /// subscriber misses rather than ending it.
    public init(distinct: Bool = false, kinds: Set<ChangeKind>? = nil, throttle: Duration? = nil,
                acknowledges: Bool = false, compact: Bool = true, everyChange: Bool = false) {
        self.distinct = distinct
        self.kinds = kinds
        self.throttle = throttle
        self.acknowledges = acknowledges
        self.compact = compact
        self.everyChange = everyChange
    }

    /// Every change, as KVO sends them.
    public static let all = DeliveryOptions()

    /// What kvod applies, and so what the subscribers of one observation must share: all but ``everyChange``.
    var daemonSettings: DeliveryOptions {
        var settings = self
        settings.everyChange = false
        return settings
    }

    /// ``throttle`` in whole milliseconds, as kvod takes it: rounded up, and
    /// kept in range of the wire's integers so that kvod names the limit.
    var throttleMilliseconds: Int? { throttle?.wholeMillisecondsRoundedUp }

    /// Adds the settings to an `observe` request (nothing for the default).
    func addFields(to line: inout RequestEncoder) {
        if distinct { line.bool(.distinct, true) }
        if let kinds {
            line.strings(.kinds, ChangeKind.allCases.filter(kinds.contains).map(\.rawValue))
        }
        if let throttleMilliseconds { line.integer(.throttle, throttleMilliseconds) }
        if acknowledges { line.bool(.ack, true) }
        if compact { line.bool(.compact, true) }
    }

    /// What an `observations` record says, or nil when a setting is malformed.
    init?(record members: JSONObject) {
        // A record names `compact` only when it is set.
        self.init(compact: false)
        // Reads an optional flag into `setting`; false when the member is there but no bool.
        func read(_ field: Field, into setting: inout Bool) -> Bool {
            guard let member = members[field] else { return true }
            guard case .bool(let flag) = member else { return false }
            setting = flag
            return true
        }
        guard read(.distinct, into: &distinct), read(.ack, into: &acknowledges), read(.compact, into: &compact)
        else { return nil }
        if let listed = members[.kinds] {
            guard case .array(let names) = listed else { return nil }
            var kinds: Set<ChangeKind> = []
            for name in names {
                guard case .string(let text) = name, let kind = ChangeKind(rawValue: text) else { return nil }
                kinds.insert(kind)
            }
            self.kinds = kinds
        }
        if let interval = members[.throttle] {
            guard case .number(let number) = interval, let milliseconds = number.intValue else { return nil }
            throttle = .milliseconds(milliseconds)
        }
    }

    /// `distinct, kinds insertion removal, throttle 200 ms`: for messages.
    var description: String {
        var parts: [String] = []
        if distinct { parts.append("distinct") }
        if let kinds {
            parts.append("kinds " + ChangeKind.allCases.filter(kinds.contains).map(\.rawValue).joined(separator: " "))
        }
        if let throttleMilliseconds { parts.append("throttle \(throttleMilliseconds) ms") }
        if acknowledges { parts.append("acknowledges") }
        if !compact { parts.append("full events") }
        return parts.isEmpty ? "every change" : parts.joined(separator: ", ")
    }
}
