/// A node of the shared controller's index: one key path of one object, the
/// observations made on exactly that path, and the nodes for longer paths.
///
/// The tree is what makes dispatch cost follow the observations that match a
/// change: a change at `a.b` walks `a`, `a.b` and the subtree under `a.b`,
/// never the observations of other paths or other objects.
final class PathNode {
    let key: String
    unowned(unsafe) let parent: PathNode?
    var children: [String: PathNode] = [:]
    var observations: [ObservationInfo] = []
    /// How many of ``observations`` want prior events: when none does, a
    /// change sends no prior events here without looking at each one.
    private(set) var priorObservers = 0
    /// `{"event":"change","object":…,"keyPath":…`, encoded once for all events of this node.
    private(set) lazy var eventHead: [UInt8] = EventEncoder.head(object: object, keyPath: path.joined(separator: "."))

    init(key: String, parent: PathNode?) {
        self.key = key
        self.parent = parent
    }

    var isEmpty: Bool { observations.isEmpty && children.isEmpty }

    func child(_ key: String) -> PathNode? { children[key] }

    func childCreating(_ key: String) -> PathNode {
        if let existing = children[key] { return existing }
        let node = PathNode(key: key, parent: self)
        children[key] = node
        return node
    }

    func append(_ info: ObservationInfo) {
        info.node = self
        info.slotInNode = observations.count
        observations.append(info)
        if info.options.contains(.prior) { priorObservers += 1 }
    }

    /// Removes in O(1) by moving the last observation into the freed slot.
    func remove(_ info: ObservationInfo) {
        let slot = info.slotInNode
        precondition(slot >= 0 && slot < observations.count && observations[slot] === info, "info not in this node")
        let last = observations.removeLast()
        if last !== info {
            observations[slot] = last
            last.slotInNode = slot
        }
        info.node = nil
        info.slotInNode = -1
        if info.options.contains(.prior) { priorObservers -= 1 }
    }

    /// Calls `body` for every node below this one (not this one), depth first.
    func forEachDescendant(depth: Int = 1, _ body: (PathNode, Int) -> Void) {
        for child in children.values {
            body(child, depth)
            child.forEachDescendant(depth: depth + 1, body)
        }
    }

    /// The object this node's tree indexes: the root's key.
    var object: String {
        var node = self
        while let parent = node.parent { node = parent }
        return node.key
    }

    /// The key path from the object's root down to this node.
    var path: [String] {
        var keys: [String] = []
        var node: PathNode? = self
        while let current = node, let parent = current.parent {
            keys.append(current.key)
            node = parent
        }
        return keys.reversed()
    }
}
