/// One decoded request: what a client asked for, with its `id` to echo.
public struct Request {
    /// The client's `id`, any JSON value, echoed in the reply; nil when absent.
    public var id: JSONValue?
    public var operation: Operation

    public init(id: JSONValue?, operation: Operation) {
        self.id = id
        self.operation = operation
    }
}

/// What a request asks for: one case per `op` of protocol v1. The engine's
/// exhaustive switch over it is the dispatch table.
public enum Operation {
    case set(object: String, keyPath: ObservedPath, value: JSONValue)
    case get(object: String, keyPath: ObservedPath?)
    case delete(object: String, keyPath: ObservedPath?)
    /// Inserts `values` at `index` (nil: append) of the array at `keyPath`.
    case insert(object: String, keyPath: ObservedPath, index: Int?, values: [JSONValue])
    /// Removes the elements at `indexes` (ascending, distinct).
    case remove(object: String, keyPath: ObservedPath, indexes: [Int])
    /// Replaces the elements at `indexes` (ascending, distinct) by `values`, pairwise.
    case replace(object: String, keyPath: ObservedPath, indexes: [Int], values: [JSONValue])
    /// Observes `keyPaths`; with `since`, first replays the changes after that point.
    case observe(object: String, keyPaths: [ObservedPath], options: ObservationOptions, context: JSONValue?,
                 since: ResumePoint?, policy: ObservationPolicy)
    /// Unobserves `keyPaths` of `object`, or all of it when nil.
    case unobserve(object: String, keyPaths: [ObservedPath]?)
    case unobserveAll
    case ping
    case info
    case observations

    /// The `op` names, as the wire spells them.
    public static let names = [
        "set", "get", "delete", "insert", "remove", "replace", "observe", "unobserve", "unobserveAll", "ping",
        "info", "observations",
    ]
}
