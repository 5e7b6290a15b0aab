import KVOValues

/// One decoded request: what a client asked for, with its `id` to echo.
/// (Made by the synthesized initializer: with one written out, every
/// ``Request`` the decoder made was copied once more, a twentieth of a set.)
public struct Request {
    /// The client's `id`, any JSON value, echoed in the reply; nil when absent.
    public var id: RequestID?
    /// Set only inside the engine: a change over etcd relies on the decoder having checked it
    /// (a whole document is an object), so code that embeds the engine cannot rewrite it.
    public internal(set) var operation: Operation
    /// A change's condition, lifetime and await, boxed: most requests have
    /// none, and three optional values cost every request their copies.
    public var modifiers: ChangeModifiers? = nil

    /// A change op's `ifModSeq`/`ifValue`; nil when it has none.
    public var condition: WriteCondition? { modifiers?.condition }
    /// A set's or add's `ephemeral`/`ttl`; nil when it has none.
    public var lifetime: ValueLifetime? { modifiers?.lifetime }
    /// A change's `await`/`awaitTimeout`: its reply waits for its observers; nil when it has none.
    public var awaiting: ChangeAwait? { modifiers?.awaiting }
}

/// What a change request asks beside its op: a condition, a lifetime, an await.
public final class ChangeModifiers: Sendable {
    public let condition: WriteCondition?
    public let lifetime: ValueLifetime?
    public let awaiting: ChangeAwait?

    init(condition: WriteCondition?, lifetime: ValueLifetime?, awaiting: ChangeAwait?) {
        self.condition = condition
        self.lifetime = lifetime
        self.awaiting = awaiting
    }
}

/// What a request asks for: one case per `op` (its name and traits are its
/// row, ``OpSpec``). The engine's exhaustive switch over it dispatches to the handlers.
public enum Operation {
    /// Sets the value at `keyPath`; at ``ObservedPath/wholeDocument``, replaces the document.
    case set(object: String, keyPath: ObservedPath, value: JSONValue)
    case get(object: String, keyPath: ObservedPath?)
    case delete(object: String, keyPath: ObservedPath?)
    /// Inserts `values` at `index` (nil: append) of the array at `keyPath`.
    case insert(object: String, keyPath: ObservedPath, index: Int?, values: [JSONValue])
    /// Removes the elements at `indexes` (ascending, distinct).
    case remove(object: String, keyPath: ObservedPath, indexes: [Int])
    /// Replaces the elements at `indexes` (ascending, distinct) by `values`, pairwise.
    case replace(object: String, keyPath: ObservedPath, indexes: [Int], values: [JSONValue])
    /// Adds `by` to the integer at `keyPath` (a missing value counts as 0):
    /// a set of the sum, refused when it would pass ``AddedInteger/limit``.
    case add(object: String, keyPath: ObservedPath, by: Int)
    /// Observes `keyPaths` (``ObservedPath/wholeDocument`` for the whole
    /// document) of one object or of every object under a prefix; with
    /// `since`, first replays the changes after that point; `compact`: its
    /// events in the compact form, naming the observation by its number;
    /// `update`: a key path already observed takes `options`.
    /// (Boxed: its payload is twice any other's, and every request would carry its size.)
    indirect case observe(scope: ObservationScope, keyPaths: [ObservedPath], options: ObservationOptions,
                 context: JSONValue?, since: ResumePoint?, policy: ObservationPolicy,
                 filter: ObservationFilter = .none, compact: Bool = false, update: Bool = false)
    /// Unobserves `keyPaths` in `scope`, or everything observed there when nil.
    case unobserve(scope: ObservationScope, keyPaths: [ObservedPath]?)
    /// The names of the objects that start with `prefix`, after `after`, at most `limit`.
    case list(prefix: String, after: String?, limit: Int)
    /// Change ops applied as one: all or none, their events contiguous.
    case batch([ChangeOperation])
    case unobserveAll
    case ping
    case info
    /// The client's observations made after the one numbered `after` (nil:
    /// from the first), oldest first, at most `limit`.
    case observations(after: UInt64?, limit: Int)
    /// The daemon's figures in Prometheus's text format (the daemon writes them).
    case metrics
    /// This client has handled every event up to `seq` on its ack observations.
    case ack(seq: UInt64)
    /// Without `offset`: take a snapshot of the data directory for this
    /// client (the daemon does); with it, the snapshot's bytes from there.
    case backup(offset: UInt64?)
}

extension Operation {
    /// The operation, moved out, `ping` left in its place: the engine takes a
    /// request's parts where binding them from a borrowed operation copied each.
    mutating func take() -> Operation {
        withUnsafeMutablePointer(to: &self) { operation in
            let taken = operation.move()
            operation.initialize(to: .ping)
            return taken
        }
    }
}
