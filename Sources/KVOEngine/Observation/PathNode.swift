import KVOValues

/// A node of the shared controller's index: one key path of one object, the
/// observations made on exactly that path, and the nodes for longer paths.
///
/// The tree is what makes dispatch cost follow the observations that match a
/// change: a change at `a.b` walks `a`, `a.b` and the subtree under `a.b`,
/// never the observations of other paths or other objects.
///
/// Its observations form a list through the infos themselves
/// (``ObservationInfo/nextInNode``), not an array here: most paths have one
/// observation, and an array would be a second allocation per path.
///
/// A root is an object's (its key is the object's name) or a prefix
/// observation's (its key is the prefix; ``isPrefixScope``). A root's own
/// observations are of the whole document.
final class PathNode: TableKeyed {
    let key: String
    unowned(unsafe) let parent: PathNode?
    /// The first observation of this path; the client tables own them, so
    /// the list holds them unretained (and walking it costs no reference counting).
    @exclusivity(unchecked) private var first: Unmanaged<ObservationInfo>?
    /// What a leaf that has sent no event lacks (children, prior observers,
    /// its event head, a computed key path, a prefix's scope), in one box
    /// made when the node first needs it: most nodes of a large index are
    /// such leaves, and without the box a node is 56 bytes (malloc's 64)
    /// where it was 88 (96).
    @exclusivity(unchecked) private var extras: PathNodeExtras?

    init(key: String, parent: PathNode?, isPrefixScope: Bool = false) {
        self.key = key
        self.parent = parent
        if parent?.isPrefixScope ?? isPrefixScope { extrasCreating.isPrefixScope = true }
        if let parent, parent.computed != nil || CollectionOperator(key: key) != nil,
           let computedPath = ComputedKeyPath(components: path) {
            extrasCreating.computed = ComputedNode(computedPath)
        }
    }

    private var extrasCreating: PathNodeExtras {
        if let extras { return extras }
        let made = PathNodeExtras()
        extras = made
        return made
    }

    /// Whether the tree is a prefix's: its events name the changed object,
    /// which differs from change to change (``head(forObject:)``).
    var isPrefixScope: Bool { extras?.isPrefixScope ?? false }

    /// How many of the observations want prior events: when none does, a
    /// change sends no prior events here without looking at each one.
    var priorObservers: Int32 { extras?.priorObservers ?? 0 }

    /// Set for a computed key path's nodes (`tags.@count`): their values are
    /// computed over an array.
    var computed: ComputedNode? { extras?.computed }

    /// `{"event":"change","object":…,"keyPath":…`, encoded once for all events
    /// of this node (no `keyPath` at a root). An object's tree only.
    var eventHead: [UInt8] {
        if let head = extras?.eventHead { return head }
        let head = EventEncoder.head(object: object, keyPath: keyPathText)
        extrasCreating.eventHead = head
        return head
    }

    /// ``eventHead``'s bytes where the box keeps them, read without a
    /// reference to count: the head never changes once made, and the box
    /// lives as long as the node, so they stay valid while the node does.
    @inline(__always)
    var eventHeadBytes: UnsafeRawBufferPointer {
        if let bytes = extras?.eventHead?.withUnsafeBytes({ $0 }) { return bytes }
        return madeEventHeadBytes()
    }

    @inline(never)
    private func madeEventHeadBytes() -> UnsafeRawBufferPointer {
        _ = eventHead
        return extras!.eventHead!.withUnsafeBytes { $0 }
    }

    /// Whether any node hangs below this one.
    var hasChildren: Bool { !(extras?.children.isEmpty ?? true) }

    /// The key path as the wire writes it; nil at a root (the whole document).
    var keyPathText: String? {
        parent == nil ? nil : path.joined(separator: ".")
    }

    /// What this node's observations watch.
    var scope: ObservationScope {
        isPrefixScope ? .prefix(object) : .object(object)
    }

    /// The head of this node's events for a change to `name`: the object's
    /// head, or for a prefix's tree the changed object's with the prefix.
    func head(forObject name: String) -> [UInt8] {
        guard isPrefixScope else { return eventHead }
        return EventEncoder.head(object: name, prefix: object, keyPath: keyPathText)
    }

    var tableKey: String { key }

    var hasObservations: Bool { first != nil }

    var isEmpty: Bool { first == nil && !hasChildren }

    func child(_ key: String) -> PathNode? { extras?.children.find(key) }

    /// ``child(_:)`` without a reference to count: valid while the child
    /// stays in the tree (no observation of it or below it ends).
    @inline(__always)
    func childUnretained(_ key: String) -> Unmanaged<PathNode>? { extras?.children.findUnretained(key) }

    func childCreating(_ key: String) -> PathNode {
        if let existing = child(key) { return existing }
        let node = PathNode(key: key, parent: self)
        extrasCreating.children.insert(node)
        extras?.orderedChildren = nil
        return node
    }

    func removeChild(_ child: PathNode) {
        extras?.children.remove(child.key)
        extras?.orderedChildren = nil
    }

    /// Links `info` in as the first observation.
    func append(_ info: ObservationInfo) {
        let link = Unmanaged.passUnretained(info)
        info.nextInNode = first
        info.previousInNode = nil
        first?._withUnsafeGuaranteedRef { $0.previousInNode = link }
        first = link
        if info.options.contains(.prior) { extrasCreating.priorObservers += 1 }
        extras?.variantBits |= UInt16(EncodingVariants(info.encodingVariant).rawValue)
    }

    /// `info`, linked here, now has other options than `old` (an `observe`
    /// with `update`): the counts and encodings kept for the node follow.
    func optionsChanged(_ info: ObservationInfo, from old: ObservationOptions) {
        let wasPrior = old.contains(.prior), isPrior = info.options.contains(.prior)
        if wasPrior != isPrior { extrasCreating.priorObservers += isPrior ? 1 : -1 }
        extras?.variantBits |= PathNodeExtras.staleVariants
    }

    /// Unlinks `info`, in O(1).
    func remove(_ info: ObservationInfo) {
        let next = info.nextInNode
        let previous = info.previousInNode
        if let previous {
            previous._withUnsafeGuaranteedRef { $0.nextInNode = next }
        } else {
            precondition(first?.toOpaque() == Unmanaged.passUnretained(info).toOpaque(), "info not in this node")
            first = next
        }
        next?._withUnsafeGuaranteedRef { $0.previousInNode = previous }
        info.nextInNode = nil
        info.previousInNode = nil
        if info.options.contains(.prior) { extras!.priorObservers -= 1 }
        extras?.variantBits |= PathNodeExtras.staleVariants
        // Changes made until it is observed again will not reach it.
        if first == nil { computed?.aggregates.removeAll() }
    }

    /// The encodings (``ObservationInfo/encodingVariant``) this node's
    /// observations read, one bit each; 0 without observations. Kept in the
    /// box and found again only after an observation left (or when the box is
    /// new), so that a change does not walk the observations twice. The first
    /// change at a node makes the box anyway, for its event head.
    /// Read in place from the box: binding the box retained and released it
    /// on every change.
    @inline(__always)
    var encodingVariants: EncodingVariants {
        let bits = extras?.variantBits ?? PathNodeExtras.staleVariants
        if bits & PathNodeExtras.staleVariants == 0 { return EncodingVariants(rawValue: UInt8(truncatingIfNeeded: bits)) }
        return foundEncodingVariants()
    }

    @inline(never)
    private func foundEncodingVariants() -> EncodingVariants {
        let box = extrasCreating
        var found = EncodingVariants.none
        forEachObservation { found.insert($0.encodingVariant) }
        box.variantBits = UInt16(found.rawValue)
        return found
    }

    /// Calls `body` with each observation of this path, without retaining
    /// them (the client tables keep them alive while they are listed here).
    /// `body` must not change the list.
    @inline(__always)
    func forEachObservation(_ body: (ObservationInfo) -> Void) {
        var cursor = first
        while let link = cursor {
            cursor = link._withUnsafeGuaranteedRef { info in
                body(info)
                return info.nextInNode
            }
        }
    }

    /// Whether any observation of this path satisfies `predicate`.
    func containsObservation(where predicate: (ObservationInfo) -> Bool) -> Bool {
        var found = false
        forEachObservation { info in found = found || predicate(info) }
        return found
    }

    /// Calls `body` for every node below this one (not this one), depth
    /// first, siblings in the order of their keys (``CanonicalName/precedes(_:_:)``):
    /// the table's own order follows hashes seeded per process, and one
    /// change's events must come in one order on every kvod and in a replay.
    func forEachDescendant(depth: Int = 1, _ body: (PathNode, Int) -> Void) {
        guard let extras, !extras.children.isEmpty else { return }
        if extras.orderedChildren == nil {
            var ordered: [PathNode] = []
            ordered.reserveCapacity(Int(extras.children.count))
            extras.children.forEach { ordered.append($0) }
            ordered.sort { CanonicalName.precedes($0.key, $1.key) }
            extras.orderedChildren = ordered
        }
        for child in extras.orderedChildren! {
            body(child, depth)
            child.forEachDescendant(depth: depth + 1, body)
        }
    }

    /// Calls `body` for this node and every node below it, depth first, while
    /// it returns true; returns whether it visited them all.
    func visitSubtree(_ body: (PathNode) -> Bool) -> Bool {
        body(self) && (extras?.children.allSatisfy { $0.visitSubtree(body) } ?? true)
    }

    /// The root of this node's tree: its object's (or prefix's) node.
    var root: PathNode {
        var node = self
        while let parent = node.parent { node = parent }
        return node
    }

    /// The object (or prefix) this node's tree indexes: the root's key.
    var object: String { root.key }

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

/// A ``PathNode``'s rarer state (see ``PathNode/extras``).
private final class PathNodeExtras {
    @exclusivity(unchecked) var children = ReferenceTable<PathNode>()
    /// The children in key order, made when the subtree is first walked
    /// after they changed (``PathNode/forEachDescendant(depth:_:)``).
    @exclusivity(unchecked) var orderedChildren: [PathNode]?
    @exclusivity(unchecked) var priorObservers: Int32 = 0
    @exclusivity(unchecked) var eventHead: [UInt8]?
    @exclusivity(unchecked) var computed: ComputedNode?
    @exclusivity(unchecked) var isPrefixScope = false
    /// ``PathNode/encodingVariants``'s bits, or ``staleVariants`` until they are found again.
    @exclusivity(unchecked) var variantBits: UInt16 = PathNodeExtras.staleVariants
    static let staleVariants: UInt16 = 1 << 8
}
