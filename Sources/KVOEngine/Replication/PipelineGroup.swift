/// The pipelines of several clients that go as one transaction
/// (Engine+GroupedPipelines): each client's requests in its order, the
/// clients one after another, within what one transaction of the store takes.
struct PipelineGroup {
    /// One client's requests in the group.
    struct Part {
        let client: ClientController
        var requests: [Request]
    }

    /// The most requests of all the clients together: four full pipelines.
    static let maxRequests = 4 * Engine.maxPipelinedChanges

    private(set) var parts: [Part] = []
    /// The objects the parts' requests name, each once.
    private var objects: Set<String> = []
    private var requestCount = 0
    /// The store's limit (``ChangeReplicator/maxObjectsPerProposal``).
    let maxObjects: Int

    init(_ parts: [Part] = [], maxObjects: Int) {
        self.maxObjects = maxObjects
        self.parts = parts
    }

    var isEmpty: Bool { parts.isEmpty }

    /// Adds `part` if the group stays within its limits with it (an empty
    /// group takes any: one client's pipeline is within them by itself).
    mutating func add(_ part: Part) -> Bool {
        var named = objects
        for request in part.requests {
            if let (object, _) = Engine.target(of: request.operation) { named.insert(object) }
        }
        guard parts.isEmpty || (named.count <= maxObjects && requestCount + part.requests.count <= Self.maxRequests)
        else { return false }
        parts.append(part)
        objects = named
        requestCount += part.requests.count
        return true
    }

    /// Every request, the parts one after another: the group's ops.
    var requests: [Request] { parts.flatMap(\.requests) }

    /// The part and the position in it of the group's `index`th request.
    func locate(_ index: Int) -> (part: Int, position: Int)? {
        var offset = index
        for (part, own) in parts.enumerated() {
            if offset < own.requests.count { return (part, offset) }
            offset -= own.requests.count
        }
        return nil
    }
}
