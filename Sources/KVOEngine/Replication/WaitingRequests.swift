import KVOValues

/// Requests of one client that wait, over etcd, behind its changes in
/// flight (``ClientController/pipelined``, ``ClientController/parked``), in
/// order, with the bytes they hold: decoded requests are memory kvod keeps
/// for a client, so they count in the memory account (``Engine/memoryEstimate``).
struct WaitingRequests<Element: HoldsRequestBytes> {
    private(set) var elements: [Element] = []
    /// The sum of the elements' ``HoldsRequestBytes/heldBytes``.
    private(set) var bytes = 0

    var isEmpty: Bool { elements.isEmpty }
    var count: Int { elements.count }

    mutating func append(_ element: Element) {
        bytes += element.heldBytes
        elements.append(element)
    }

    /// Puts `element` first: it goes before what waited.
    mutating func prepend(_ element: Element) {
        bytes += element.heldBytes
        elements.insert(element, at: 0)
    }

    /// Puts `prefix` first, in its order.
    mutating func prepend(contentsOf prefix: some Collection<Element>) {
        bytes += prefix.reduce(0) { $0 + $1.heldBytes }
        elements.insert(contentsOf: prefix, at: 0)
    }

    mutating func removeFirst() -> Element {
        let element = elements.removeFirst()
        bytes -= element.heldBytes
        return element
    }

    /// Every element, in order, leaving none.
    mutating func removeAll() -> [Element] {
        bytes = 0
        defer { elements = [] }
        return elements
    }
}

/// What a waiting request keeps in memory, about.
protocol HoldsRequestBytes {
    var heldBytes: Int { get }
}

extension Request: HoldsRequestBytes {
    /// A request's structure (its enum, boxes, id and array headers) about.
    static let fixedBytes = 256

    /// Its decoded values at twice their JSON size, as contexts are counted
    /// (``ObservationInfo/contextBytes``), beside a fixed part.
    var heldBytes: Int {
        var bytes = Self.fixedBytes + 2 * operation.payloadEstimate
        if let ifValue = condition?.ifValue { bytes += 2 * ifValue.sizeEstimate }
        return bytes
    }
}

extension ParkedRequest: HoldsRequestBytes {
    var heldBytes: Int {
        switch self {
        case .request(let request), .alone(let request): request.heldBytes
        case .failure(_, let error): Request.fixedBytes + error.message.utf8.count
        }
    }
}

extension Operation {
    /// About the bytes of the names, key paths and values it carries, as JSON.
    var payloadEstimate: Int {
        switch self {
        case .set(let object, let keyPath, let value):
            object.utf8.count + keyPath.utf8Estimate + value.sizeEstimate
        case .get(let object, let keyPath), .delete(let object, let keyPath):
            object.utf8.count + (keyPath?.utf8Estimate ?? 0)
        case .insert(let object, let keyPath, _, let values):
            object.utf8.count + keyPath.utf8Estimate + values.reduce(0) { $0 + $1.sizeEstimate }
        case .add(let object, let keyPath, _):
            object.utf8.count + keyPath.utf8Estimate + 8
        case .remove(let object, let keyPath, let indexes):
            object.utf8.count + keyPath.utf8Estimate + 8 * indexes.count
        case .replace(let object, let keyPath, let indexes, let values):
            object.utf8.count + keyPath.utf8Estimate + values.reduce(8 * indexes.count) { $0 + $1.sizeEstimate }
        case .observe(let scope, let keyPaths, _, let context, _, _, _, _, _):
            scope.name.utf8.count + keyPaths.reduce(0) { $0 + $1.utf8Estimate } + (context?.sizeEstimate ?? 0)
        case .unobserve(let scope, let keyPaths):
            scope.name.utf8.count + (keyPaths ?? []).reduce(0) { $0 + $1.utf8Estimate }
        case .list(let prefix, let after, _):
            prefix.utf8.count + (after?.utf8.count ?? 0)
        case .batch(let operations):
            operations.reduce(0) {
                $0 + $1.operation.payloadEstimate + ($1.condition?.ifValue?.sizeEstimate ?? 0)
            }
        case .unobserveAll, .ping, .info, .observations, .metrics, .ack, .backup:
            0
        }
    }
}

extension ObservedPath {
    /// Its keys' bytes and a separator each.
    var utf8Estimate: Int { components.reduce(0) { $0 + $1.utf8.count + 1 } }
}
