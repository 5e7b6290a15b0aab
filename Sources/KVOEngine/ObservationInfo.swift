/// One observation: a key path (or the whole document) of an object, or of
/// every object under a prefix, observed by one client, with its options and
/// context (KVOController's `_FBKVOInfo`).
///
/// Two infos are equal when their key paths are equal: that is the rule by
/// which a ``ClientController`` keeps one observation per key path.
///
/// Kept small, because there may be millions: 56 bytes, one allocation (of
/// malloc's 64-byte size, as when it was 49). While
/// it observes, its object and key path are its node's in the shared index,
/// not copies, and a context lives in a side object only when there is one.
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

    /// Where the observation is: its own description before registration
    /// and after, its node while registered. Three class payloads: the enum
    /// is one word.
    private enum Place {
        case detached(DetachedPlace)
        case registered(PathNode)
        case registeredWithContext(ContextPlace)
    }

    /// The controller that made it. Not weak: loading a weak reference on
    /// every delivered event cost more than the delivery. Safe because a
    /// controller unregisters all its infos before it goes
    /// (`ClientController.deinit` → `unobserveAll`), and only registered
    /// infos are reached from the shared controller.
    unowned(unsafe) let owner: ClientController
    private var place: Place
    /// The node's list of observations runs through its infos, unretained.
    var nextInNode: Unmanaged<ObservationInfo>?
    var previousInNode: Unmanaged<ObservationInfo>?
    /// The options (low four bits), the state (bits 4–5), the policy (bit
    /// 6) and whether a filter drops events (bit 7) in the low byte; the ``serial`` above them. One word, in what was
    /// the allocation's padding after a one-byte field.
    private var bits: UInt64

    private var flags: UInt8 {
        get { UInt8(truncatingIfNeeded: bits) }
        set { bits = bits & ~0xFF | UInt64(newValue) }
    }

    /// Its number among its client's observations, in the order they were
    /// made: what `observations` pages by. At most 2⁵⁶ − 1.
    var serial: UInt64 {
        get { bits >> 8 }
        set {
            precondition(newValue < 1 << 56, "observation serial out of range")
            bits = bits & 0xFF | newValue << 8
        }
    }

    init(object: String, keyPath: ObservedPath, options: ObservationOptions, context: JSONValue?,
         policy: ObservationPolicy = .default, controller: ClientController) {
        owner = controller
        place = .detached(DetachedPlace(scope: .object(object), keyPath: keyPath, context: context))
        bits = UInt64(options.rawValue & 0x0F | Self.policyBits(policy))
    }

    /// An info for `node`, to be registered there (no detached copy of its
    /// object and key path is made only to be dropped at registration).
    init(node: PathNode, options: ObservationOptions, context: JSONValue?,
         policy: ObservationPolicy = .default, filter: ObservationFilter = .none, controller: ClientController) {
        owner = controller
        if context != nil || filter.needsKeeping {
            place = .registeredWithContext(ContextPlace(node: node, context: context, filter: filter))
        } else {
            place = .registered(node)
        }
        bits = UInt64(options.rawValue & 0x0F | Self.policyBits(policy) | (filter.isQuiet ? 0x80 : 0))
    }

    private static func policyBits(_ policy: ObservationPolicy) -> UInt8 {
        policy == .disconnect ? 0x40 : 0
    }

    /// What happens to its events while the client does not keep up (bit 6).
    public var policy: ObservationPolicy { flags & 0x40 != 0 ? .disconnect : .coalesce }

    public var options: ObservationOptions { ObservationOptions(rawValue: flags & 0x0F) }

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
        case .registeredWithContext(let context): context.node.scope
        }
    }

    public var keyPath: ObservedPath {
        switch place {
        case .detached(let detached): detached.keyPath
        case .registered(let node): ObservedPath(components: node.path)
        case .registeredWithContext(let context): ObservedPath(components: context.node.path)
        }
    }

    /// The client's context, echoed in every event of this observation.
    public var context: JSONValue? {
        switch place {
        case .detached(let detached): detached.context
        case .registered: nil
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
        case .registered: .none
        case .registeredWithContext(let context): context.filter
        }
    }

    /// Its node in the shared index, while registered.
    var node: PathNode? {
        switch place {
        case .detached: nil
        case .registered(let node): node
        case .registeredWithContext(let context): context.node
        }
    }

    /// The key of the client's table: the node, which stands for (object, key path).
    var tableKey: ObjectIdentifier { ObjectIdentifier(node!) }

    /// `,"context":<json>`, encoded once so that every event reuses the bytes;
    /// nil without a context.
    var contextFragment: [UInt8]? {
        if case .registeredWithContext(let context) = place { return context.fragment }
        return nil
    }

    /// Moves it to `node`: the shared controller registers it.
    func place(at node: PathNode) {
        if case .detached(let detached) = place, detached.context != nil || detached.filter.needsKeeping {
            place = .registeredWithContext(ContextPlace(node: node, context: detached.context, filter: detached.filter))
        } else {
            place = .registered(node)
        }
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

    init(scope: ObservationScope, keyPath: ObservedPath, context: JSONValue?, filter: ObservationFilter = .none) {
        self.scope = scope
        self.keyPath = keyPath
        self.context = context
        self.filter = filter
    }
}

/// A registered info's node, context and filter, for the infos that have a
/// context or a filter.
private final class ContextPlace {
    let node: PathNode
    let context: JSONValue?
    let fragment: [UInt8]?
    let filter: ObservationFilter

    init(node: PathNode, context: JSONValue?, filter: ObservationFilter = .none) {
        self.node = node
        self.context = context
        self.filter = filter
        guard let context else {
            fragment = nil
            return
        }
        var fragment: [UInt8] = []
        fragment.append(literal: #","context":"#)
        JSONWriter.write(context, into: &fragment)
        self.fragment = fragment
    }
}
