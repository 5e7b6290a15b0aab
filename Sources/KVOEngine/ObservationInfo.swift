/// One observation: a key path of an object observed by one client, with its
/// options and context (KVOController's `_FBKVOInfo`).
///
/// Two infos are equal when their key paths are equal: that is the rule by
/// which a ``ClientController`` keeps one observation per key path.
public final class ObservationInfo: Hashable, CustomStringConvertible {
    /// The life of an observation. It only moves forward.
    public enum State: Sendable {
        /// Made, not yet registered with the shared controller.
        case initial
        /// Registered: changes reach it.
        case observing
        /// Unregistered: it will never hear of a change again.
        case notObserving
    }

    public let object: String
    public let keyPath: ObservedPath
    public let options: ObservationOptions
    /// The client's context, echoed in every event of this observation.
    public let context: JSONValue?
    /// `,"context":<json>`, encoded once so that every event reuses the bytes.
    let contextFragment: [UInt8]
    /// Whether ``contextFragment`` is not empty, read without touching the array.
    let hasContext: Bool
    /// The controller that made it, while it observes (nil after): an info
    /// never keeps its controller alive, as in KVOController.
    public var controller: ClientController? { state == .notObserving ? nil : owner }
    /// Not weak: loading a weak reference on every delivered event cost more
    /// than the delivery. Safe because a controller unregisters all its
    /// infos before it goes (`ClientController.deinit` → `unobserveAll`), and
    /// only registered infos are reached from the shared controller.
    unowned(unsafe) let owner: ClientController
    public internal(set) var state: State = .initial

    /// Where the shared controller keeps it: its node, and its slot in the
    /// node's list, so that removal is O(1).
    unowned(unsafe) var node: PathNode?
    var slotInNode = -1

    init(object: String, keyPath: ObservedPath, options: ObservationOptions, context: JSONValue?,
         controller: ClientController) {
        self.object = object
        self.keyPath = keyPath
        self.options = options
        self.context = context
        self.owner = controller
        if let context {
            var fragment = Array(#","context":"#.utf8)
            JSONWriter.write(context, into: &fragment)
            self.contextFragment = fragment
        } else {
            self.contextFragment = []
        }
        hasContext = context != nil
    }

    public static func == (lhs: ObservationInfo, rhs: ObservationInfo) -> Bool {
        lhs.keyPath == rhs.keyPath
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(keyPath)
    }

    public var description: String {
        "<ObservationInfo \(object) \(keyPath) options:\(options.wireNames) state:\(state)>"
    }
}
