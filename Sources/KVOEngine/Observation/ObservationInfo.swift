import KVOProtocol
import KVOValues

/// One observation: a key path (or the whole document) of an object, or of
/// every object under a prefix, observed by one client, with its options and
/// context (KVOController's `_FBKVOInfo`).
///
/// Two infos are equal when their key paths are equal: that is the rule by
/// which a ``ClientController`` keeps one observation per key path.
///
/// Kept small, because there may be millions: 72 bytes, one allocation (of
/// malloc's 80-byte size). While
/// it observes, its object and key path are its node's in the shared index,
/// not copies, and a context lives in a side object only when there is one.
/// The two health counters every event moves (`eventsSent`, `lastSeqSent`)
/// are its own fields, because a side object touched per event cost more than
/// the delivery; the coalesced count, moved only for a slow reader, lives in a
/// side object made at the first coalesced event.
public final class ObservationInfo: Hashable, CustomStringConvertible, TableKeyed {
    /// The life of an observation. It only moves forward.
    public enum State: Sendable {
        /// Made, not yet registered with the shared controller.
        case initial
        /// Registered: changes reach it.
        case observing
        /// Unregistered: it will never hear of a change again.
        case notObserving
    }

    /// Where the observation is: its node while registered (with its health
    /// counters once it has sent an event, and its context and filter if it
    /// has them), its own description after (``detach()``).
    /// Four class payloads: the enum is one word.
    private enum Place {
        case detached(DetachedPlace)
        case registered(PathNode)
        case registeredWithHealth(HealthPlace)
        case registeredWithContext(ContextPlace)
    }

    /// The controller that made it. Not weak: loading a weak reference on
    /// every delivered event cost more than the delivery. Safe because a
    /// controller unregisters all its infos before it goes
    /// (`ClientController.deinit` → `unobserveAll`), and only registered
    /// infos are reached from the shared controller.
    unowned(unsafe) let owner: ClientController
    @exclusivity(unchecked) private var place: Place
    /// The node's list of observations runs through its infos, unretained.
    @exclusivity(unchecked) var nextInNode: Unmanaged<ObservationInfo>?
    @exclusivity(unchecked) var previousInNode: Unmanaged<ObservationInfo>?
    /// The options (low four bits), the state (bits 4–5), the policy (bit
    /// 6) and whether a filter drops events (bit 7) in the low byte; whether
    /// its events are compact (bit 8); the ``serial`` above them. One word, in what was
    /// the allocation's padding after a one-byte field.
    @exclusivity(unchecked) private var bits: UInt64
    /// Events written to its client (`observations`' `eventsSent`).
    @exclusivity(unchecked) private(set) var eventsSent: UInt64 = 0
    /// The seq of the last event written; 0 before the first.
    @exclusivity(unchecked) private(set) var lastSeqSent: UInt64 = 0

    private var flags: UInt8 {
        get { UInt8(truncatingIfNeeded: bits) }
        set { bits = bits & ~0xFF | UInt64(newValue) }
    }

    /// Its number among its client's observations, in the order they were
    /// made: what `observations` pages by. At most 2⁵⁵ − 1.
    var serial: UInt64 {
        get { bits >> 9 }
        set {
            precondition(newValue < 1 << 55, "observation serial out of range")
            bits = bits & 0x1FF | newValue << 9
        }
    }

    /// Whether its events come in the compact form (`"compact":true`), which
    /// names it by ``number`` instead of its object and key path.
    public var isCompact: Bool { bits & 0x100 != 0 }

    /// What the wire calls it: its compact events' `o`, `observe`'s reply's.
    /// Unique on its connection for the connection's life, from 1.
    public var number: UInt64 { serial + 1 }

    /// Which of a change's encodings it reads (``EncodingVariant``).
    var encodingVariant: Int {
        EncodingVariant.of(options: ObservationOptions(rawValue: UInt8(truncatingIfNeeded: bits)), compact: isCompact)
    }

    /// The head of its events for a change to `object`, written before their
    /// fields: its node's (``PathNode/head(forObject:)``) or, when compact,
    /// `{"o":N` and for a prefix observation the changed object.
    func eventHead(forObject object: String) -> [UInt8] {
        guard isCompact, let node else { return node?.head(forObject: object) ?? [] }
        var head: [UInt8] = []
        EventEncoder.appendCompactStart(number, to: &head)
        if node.isPrefixScope { EventEncoder.appendObjectMember(object, to: &head) }
        return head
    }

    /// An info for `node`, to be registered there.
    init(node: PathNode, options: ObservationOptions, context: JSONValue?,
         policy: ObservationPolicy = .default, filter: ObservationFilter = .none, compact: Bool = false,
         controller: ClientController) {
        owner = controller
        if context != nil || filter.needsKeeping {
            place = .registeredWithContext(ContextPlace(node: node, context: context, filter: filter))
        } else {
            place = .registered(node)
        }
        bits = UInt64(options.rawValue & 0x0F | Self.policyBits(policy) | (filter.isQuiet ? 0x80 : 0))
            | (compact ? 0x100 : 0)
    }

    private static func policyBits(_ policy: ObservationPolicy) -> UInt8 {
        policy == .disconnect ? 0x40 : 0
    }

    /// What happens to its events while the client does not keep up (bit 6).
    public var policy: ObservationPolicy { flags & 0x40 != 0 ? .disconnect : .coalesce }

    public var options: ObservationOptions { ObservationOptions(rawValue: flags & 0x0F) }

    /// Takes `options` in place of its own (an `observe` with `update`);
    /// its node must be told (``PathNode/optionsChanged(_:from:)``).
    func replaceOptions(with options: ObservationOptions) {
        flags = flags & ~0x0F | options.rawValue & 0x0F
    }

    public internal(set) var state: State {
        get {
            switch (flags >> 4) & 0x03 {
            case 0: .initial
            case 1: .observing
            default: .notObserving
            }
        }
        set {
            let bits: UInt8 = switch newValue {
            case .initial: 0
            case .observing: 1
            case .notObserving: 2
            }
            flags = flags & 0xCF | bits << 4
        }
    }

    /// Whether its client unobserved everything (or closed) after it was
    /// made, and it only waits for its slice to leave the index
    /// (``SharedController/unregisterLeaving(budget:)``): it gets no event.
    /// Asked only of a registered info, whose client is alive.
    var isLeaving: Bool { serial < owner.firstLiveSerial }

    /// The controller that made it, while it observes (nil after): an info
    /// never keeps its controller alive, as in KVOController.
    public var controller: ClientController? { state == .notObserving ? nil : owner }

    /// The object observed, or the prefix of a prefix observation (see ``scope``).
    public var object: String { scope.name }

    /// What it observes: one object, or every object under a prefix.
    public var scope: ObservationScope {
        switch place {
        case .detached(let detached): detached.scope
        case .registered(let node): node.scope
        case .registeredWithHealth(let health): health.node.scope
        case .registeredWithContext(let context): context.node.scope
        }
    }

    public var keyPath: ObservedPath {
        switch place {
        case .detached(let detached): detached.keyPath
        case .registered(let node): ObservedPath(components: node.path)
        case .registeredWithHealth(let health): ObservedPath(components: health.node.path)
        case .registeredWithContext(let context): ObservedPath(components: context.node.path)
        }
    }

    /// The client's context, echoed in every event of this observation.
    public var context: JSONValue? {
        switch place {
        case .detached(let detached): detached.context
        case .registered, .registeredWithHealth: nil
        case .registeredWithContext(let context): context.context
        }
    }

    /// Whether its ``filter`` may drop events (bit 7): the one test a
    /// delivery of an unfiltered observation pays.
    var isQuiet: Bool { flags & 0x80 != 0 }

    /// Which of its events are sent (`distinct`, `kinds`).
    public var filter: ObservationFilter {
        switch place {
        case .detached(let detached): detached.filter
        case .registered, .registeredWithHealth: .none
        case .registeredWithContext(let context): context.filter
        }
    }

    /// Its node in the shared index, while registered.
    var node: PathNode? {
        switch place {
        case .detached: nil
        case .registered(let node): node
        case .registeredWithHealth(let health): health.node
        case .registeredWithContext(let context): context.node
        }
    }

    /// Earlier events that the ones written stood for (`observations`'
    /// `eventsCoalesced`); 0 until its client was slow or it was throttled.
    var eventsCoalesced: UInt64 {
        switch place {
        case .detached, .registered: 0
        case .registeredWithHealth(let health): health.eventsCoalesced
        case .registeredWithContext(let context): context.eventsCoalesced
        }
    }

    /// Counts an event written to its client: `seq` is the event's, and
    /// `coalesced` how many earlier events it stands for.
    @inline(__always)
    func noteSent(seq: UInt64, coalesced: Int = 0) {
        eventsSent &+= 1
        lastSeqSent = seq
        if coalesced > 0 { noteCoalesced(coalesced) }
    }

    /// The coalesced count, in the side object (made here the first time).
    @inline(never)
    private func noteCoalesced(_ coalesced: Int) {
        let health: HealthPlace
        switch place {
        case .registeredWithHealth(let kept): health = kept
        case .registeredWithContext(let kept): health = kept
        case .registered(let node):
            health = HealthPlace(node: node)
            place = .registeredWithHealth(health)
        case .detached: return
        }
        health.eventsCoalesced &+= UInt64(coalesced)
    }

    /// The key of the client's table: the node, which stands for (object, key path).
    /// Read from the place without returning the node: `node!` retained and
    /// released it each time (every insert, every move of a growing table).
    var tableKey: ObjectIdentifier {
        switch place {
        case .registered(let node): ObjectIdentifier(node)
        case .registeredWithHealth(let health): ObjectIdentifier(health.node)
        case .registeredWithContext(let context): ObjectIdentifier(context.node)
        case .detached: preconditionFailure("a detached observation is in no client's table")
        }
    }

    /// `,"context":<json>`, encoded once so that every event reuses the bytes;
    /// nil without a context.
    var contextFragment: [UInt8]? {
        if case .registeredWithContext(let context) = place { return context.fragment }
        return nil
    }

    /// ``contextFragment``'s bytes where the info keeps them, read without
    /// a reference to count (once per event): valid while the info stays
    /// registered, for its context never changes. Nil without a context.
    var contextFragmentBytes: UnsafeRawBufferPointer? {
        if case .registeredWithContext(let context) = place { return context.fragment?.withUnsafeBytes { $0 } }
        return nil
    }

    /// What its context holds in memory beyond ``ResourceAccount/observationBytes``,
    /// for the memory account: the value and its encoded fragment (what a
    /// context of a given size was measured to cost in RSS).
    var contextBytes: Int { 2 * (contextFragment?.count ?? 0) }

    /// ``contextBytes`` for a context about to be registered.
    static func contextBytes(of context: JSONValue?) -> Int {
        context.map { 2 * ($0.sizeEstimate + LineFragment.contextMember.utf8CodeUnitCount) } ?? 0
    }

    /// Takes it off its node with its own copy of what it observed, for
    /// whoever still holds it (the node may go).
    func detach() {
        guard let node else { return }
        place = .detached(DetachedPlace(scope: node.scope, keyPath: ObservedPath(components: node.path),
                                        context: context, filter: filter))
    }

    public static func == (lhs: ObservationInfo, rhs: ObservationInfo) -> Bool {
        lhs.keyPath == rhs.keyPath
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(keyPath)
    }

    public var description: String {
        "<ObservationInfo \(scope) \(keyPath.isWholeDocument ? "(whole document)" : keyPath.description) options:\(options.wireNames) policy:\(policy) state:\(state)>"
    }
}

/// An info's object, key path and context while it is not registered.
private final class DetachedPlace {
    let scope: ObservationScope
    let keyPath: ObservedPath
    let context: JSONValue?
    let filter: ObservationFilter

    init(scope: ObservationScope, keyPath: ObservedPath, context: JSONValue?, filter: ObservationFilter) {
        self.scope = scope
        self.keyPath = keyPath
        self.context = context
        self.filter = filter
    }
}

/// A registered info's node and coalesced count, for the infos that have
/// sent a coalesced event.
class HealthPlace {
    let node: PathNode
    /// Earlier events that the ones written stood for (`coalesced`).
    var eventsCoalesced: UInt64 = 0

    init(node: PathNode) {
        self.node = node
    }
}

/// A registered info's node, context and filter (and coalesced count), for
/// the infos that have a context or a filter.
private final class ContextPlace: HealthPlace {
    let context: JSONValue?
    let fragment: [UInt8]?
    let filter: ObservationFilter

    init(node: PathNode, context: JSONValue?, filter: ObservationFilter = .none) {
        self.context = context
        self.filter = filter
        fragment = context.map { context in
            var fragment: [UInt8] = []
            fragment.append(literal: LineFragment.contextMember)
            JSONWriter.write(context, into: &fragment)
            return fragment
        }
        super.init(node: node)
    }
}
