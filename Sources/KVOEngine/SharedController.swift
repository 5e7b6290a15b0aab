/// The one registry of observations (KVOController's `_FBKVOSharedController`,
/// "a receptionist, receiving and forwarding notifications").
///
/// The store reports each change here in two steps: ``willChange`` before it
/// is applied (prior events; old values of ancestor paths) and ``didChange``
/// after (the change events). Observations are indexed by object, then by key
/// path in a tree of ``PathNode``s, so a change costs the path's length plus
/// the observations it matches, whatever else is observed.
///
/// Each event is encoded once per (key path, options) and its bytes are copied
/// to every matching observation; only the context differs per observation.
public final class SharedController {
    private var roots: [String: PathNode] = [:]
    /// How many observations are registered, across all clients.
    public private(set) var observationCount = 0
    /// Nodes and observations the last change visited: the measure of its
    /// cost that tests hold to the number of matches, not of registrations.
    private(set) var lastChangeVisits = 0

    public init() {}

    // MARK: Registry

    func register(_ info: ObservationInfo) {
        precondition(info.state == .initial, "an observation is registered once")
        let root: PathNode
        if let existing = roots[info.object] {
            root = existing
        } else {
            root = PathNode(key: info.object, parent: nil)
            roots[info.object] = root
        }
        var node = root
        for key in info.keyPath.components { node = node.childCreating(key) }
        node.append(info)
        info.state = .observing
        observationCount += 1
    }

    func unregister(_ info: ObservationInfo) {
        guard info.state == .observing, let node = info.node else { return }
        node.remove(info)
        info.state = .notObserving
        observationCount -= 1
        prune(from: node)
    }

    /// Drops nodes left with no observations and no children, up to the root.
    private func prune(from start: PathNode) {
        var node = start
        while node.isEmpty {
            guard let parent = node.parent else {
                roots[node.key] = nil
                return
            }
            parent.children[node.key] = nil
            node = parent
        }
    }

    /// Whether anything observes this object (the store's fast path).
    func isObserved(_ object: String) -> Bool { roots[object] != nil }

    // MARK: Dispatch

    /// The observations of one node that a change reaches, and how they relate to it.
    struct MatchGroup {
        enum Relation {
            /// The node is the changed path: it sees the change's own kind.
            case exact
            /// The node lies `depth` keys under the changed path (which was replaced).
            case descendant(depth: Int)
            /// The node lies above the changed path (a part of its value changed).
            case ancestor
        }
        let node: PathNode
        let relation: Relation
        var old: JSONValue?
        var new: JSONValue?
    }

    /// A change between ``willChange`` and ``didChange``.
    struct PendingChange {
        var change: ChangeRecord
        var groups: [MatchGroup]
    }

    /// Finds the observations that `change` reaches, sends their prior events,
    /// and keeps the old values that their events need. `valueBefore` reads the
    /// store as it is now, before the change. Returns nil when nobody observes.
    func willChange(_ change: ChangeRecord, valueBefore: (ArraySlice<String>) -> JSONValue?) -> PendingChange? {
        lastChangeVisits = 0
        guard let root = roots[change.object] else { return nil }
        var groups: [MatchGroup] = []
        var node = root
        var reachedPath = true
        for (depth, key) in change.path.enumerated() {
            if !node.observations.isEmpty, depth > 0 {
                // Reading the old value keeps a reference to it, which makes the
                // store copy that part of the document: only do it when asked.
                let wantsOld = node.observations.contains { $0.options.contains(.old) }
                groups.append(MatchGroup(node: node, relation: .ancestor,
                                         old: wantsOld ? valueBefore(change.path[..<depth]) : nil, new: nil))
            }
            guard let next = node.child(key) else {
                reachedPath = false
                break
            }
            node = next
            lastChangeVisits += 1
        }
        if reachedPath {
            if change.path.isEmpty {
                node.forEachDescendant { descendant, depth in
                    lastChangeVisits += 1
                    if !descendant.observations.isEmpty {
                        groups.append(MatchGroup(node: descendant, relation: .descendant(depth: depth)))
                    }
                }
            } else {
                if !node.observations.isEmpty {
                    groups.append(MatchGroup(node: node, relation: .exact, old: change.old, new: change.new))
                }
                node.forEachDescendant { descendant, depth in
                    lastChangeVisits += 1
                    if !descendant.observations.isEmpty {
                        groups.append(MatchGroup(node: descendant, relation: .descendant(depth: depth)))
                    }
                }
            }
        }
        guard !groups.isEmpty else { return nil }
        for index in groups.indices {
            if case .descendant(let depth) = groups[index].relation {
                let rest = groups[index].node.path.suffix(depth)
                let collection = change.kind != .setting
                groups[index].old = collection ? nil : change.old?.value(at: rest)
                groups[index].new = collection ? nil : change.new?.value(at: rest)
            }
        }
        let pending = PendingChange(change: change, groups: groups)
        send(pending, prior: true)
        return pending
    }

    /// Sends the change events, once the store has applied the change.
    /// `valueAfter` reads the store as it is now.
    func didChange(_ pending: PendingChange, valueAfter: (ArraySlice<String>) -> JSONValue?) {
        var pending = pending
        for index in pending.groups.indices where pending.groups[index].isAncestor {
            pending.groups[index].new = valueAfter(pending.groups[index].node.path[...])
        }
        send(pending, prior: false)
    }

    private func send(_ pending: PendingChange, prior: Bool) {
        let change = pending.change
        for group in pending.groups {
            // Up to four encodings per node, one per combination of new/old.
            var encoded: [[UInt8]?] = [nil, nil, nil, nil]
            lastChangeVisits += group.node.observations.count
            for info in group.node.observations {
                if prior && !info.options.contains(.prior) { continue }
                guard let controller = info.controller else { continue }
                let variant = Int(info.options.intersection([.new, .old]).rawValue)
                if encoded[variant] == nil {
                    encoded[variant] = EventEncoder.change(
                        change, keyPath: group.node.encodedKeyPath, exact: group.isExact, old: group.old,
                        new: group.new, options: info.options, prior: prior)
                }
                controller.deliver(event: encoded[variant]!, contextFragment: info.contextFragment)
            }
        }
    }

    // MARK: Inspection

    /// Every registered observation, for tests and debugging (a full walk).
    public var debugDescription: String {
        var lines: [String] = ["<SharedController observations:\(observationCount)>"]
        for (object, root) in roots.sorted(by: { $0.key < $1.key }) {
            root.forEachDescendant { node, _ in
                for info in node.observations {
                    lines.append("  \(object) \(info.keyPath) \(info.options.wireNames)")
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension SharedController.MatchGroup {
    init(node: PathNode, relation: Relation) {
        self.init(node: node, relation: relation, old: nil, new: nil)
    }

    var isExact: Bool {
        if case .exact = relation { return true }
        return false
    }

    var isAncestor: Bool {
        if case .ancestor = relation { return true }
        return false
    }
}
