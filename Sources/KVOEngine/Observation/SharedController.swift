import DequeModule
import KVOValues

/// The one registry of observations (KVOController's `_FBKVOSharedController`,
/// "a receptionist, receiving and forwarding notifications").
///
/// The store reports each change here in two steps: ``willChange`` before it
/// is applied (prior events; old values of ancestor paths) and ``didChange``
/// after (the change events). Observations are indexed by object, then by key
/// path in a tree of ``PathNode``s, so a change costs the path's length plus
/// the observations it matches, whatever else is observed. Prefix
/// observations have trees of their own, one per prefix, found through a
/// ``PrefixTrie`` of the changed object's name.
///
/// Each event is encoded once per (key path, options, form) and its bytes are
/// copied to every matching observation; only the context (and a compact
/// event's observation number) differs per observation.
/// A congested client's events are held without bytes (``HeldEvents``): a
/// node whose observers are all congested encodes nothing.
public final class SharedController {
    /// The roots of the index, one per observed object, in the entries the
    /// store shares (``ObjectTable``).
    private let objects: ObjectTable
    /// The roots of the prefix observations' trees, by prefix.
    let prefixRoots = PrefixTrie<PathNode>()
    /// Who may read what: a prefix observation hears only of the objects its
    /// client may read. Nil: everyone reads everything.
    @exclusivity(unchecked) var accessPolicy: AccessPolicy?
    /// How many observations are registered, across all clients.
    @exclusivity(unchecked) public private(set) var observationCount = 0
    /// What the registered observations' contexts hold, in bytes (``ObservationInfo/contextBytes``).
    @exclusivity(unchecked) public private(set) var contextBytes = 0
    /// Events written to clients' output, across all clients (`info`'s `eventsSent`).
    @exclusivity(unchecked) public internal(set) var eventsSent: UInt64 = 0
    /// Events dropped in favour of a later one that was sent: the sum of the
    /// `coalesced` counts sent (`info`'s `eventsCoalesced`).
    @exclusivity(unchecked) public internal(set) var eventsCoalesced: UInt64 = 0
    /// Clients whose events are being held or folded now, for not keeping
    /// up (`info`'s `coalescingConnections`).
    @exclusivity(unchecked) public internal(set) var coalescingClients = 0
    /// Over etcd, the bytes of every client's requests that wait behind its
    /// changes in flight (``WaitingRequests``): part of the memory account.
    @exclusivity(unchecked) public internal(set) var waitingRequestBytes = 0
    /// The bytes of the aggregates computed key paths keep from change to
    /// change (``KeptAggregates``): part of the memory account.
    @exclusivity(unchecked) public internal(set) var aggregateBytes = 0
    /// Nodes and observations the last change visited: the measure of its
    /// cost that tests hold to the number of matches, not of registrations.
    @exclusivity(unchecked) private(set) var lastChangeVisits = 0
    /// Passes over an array the last change made for computed key paths
    /// (`@sum` and the like): what tests hold to one per change.
    @exclusivity(unchecked) private(set) var lastChangeArrayPasses = 0
    /// `--max-client-memory` as events are written (``ClientMemoryRoom``).
    @exclusivity(unchecked) var clientMemory = ClientMemoryRoom()
    /// Held clients with nothing in their output, waiting for room to drain,
    /// in the order they began; one that stopped waiting (it drained, closed)
    /// stays until the wake passes it, so that leaving costs nothing.
    @exclusivity(unchecked) var clientMemoryWaiters: [ClientController] = []
    /// Change events made, coalesced and dropped, for `metrics`.
    @exclusivity(unchecked) public internal(set) var eventCounts = EventCounts()
    /// ``send``'s encodings of one node's events, in a buffer reused from change to change.
    @exclusivity(unchecked) private(set) var encoder = EventVariantEncoder()
    /// The ends of throttled observations' intervals.
    let throttleSchedule = ThrottleSchedule()
    /// The writers' waits (`await`) not finished yet.
    let awaitSchedule = AwaitSchedule()
    /// Observations of clients that unobserved everything or closed, to
    /// leave the index in slices (``unregisterLeaving(budget:)``), and how many.
    @exclusivity(unchecked) var leaving = Deque<LeavingObservations>()
    @exclusivity(unchecked) public internal(set) var leavingCount = 0
    /// Clients with initial events to write in slices, in turn.
    @exclusivity(unchecked) var pacingClients: [ClientController] = []
    /// Set while a change with `await` is dispatched: told of each
    /// observation the change is due to reach.
    @exclusivity(unchecked) var awaitCollector: AwaitCollector?

    init(objects: ObjectTable) {
        self.objects = objects
    }

    // MARK: Registry

    /// Registers an info made for `node` (``nodeCreating(_:below:)``'s).
    func register(_ info: ObservationInfo, at node: PathNode) {
        precondition(info.state == .initial, "an observation is registered once")
        node.append(info)
        info.state = .observing
        observationCount += 1
        contextBytes += info.contextBytes
    }

    /// Unregisters `info`. With `keepDescription` (the default) it keeps its
    /// own copy of what it observed, for whoever still holds it; a client
    /// dropping its last reference passes false and saves the copy.
    func unregister(_ info: ObservationInfo, keepDescription: Bool = true) {
        guard info.state == .observing, let node = info.node else { return }
        let kept = node.computed?.aggregates.bytes ?? 0
        node.remove(info)
        aggregateBytes -= kept - (node.computed?.aggregates.bytes ?? 0)
        info.state = .notObserving
        observationCount -= 1
        contextBytes -= info.contextBytes
        if keepDescription { info.detach() }
        prune(from: node)
    }

    /// The node of `keyPath` in `scope`, if anything is registered there or below.
    func node(_ scope: ObservationScope, _ keyPath: ObservedPath) -> PathNode? {
        let root: PathNode? = switch scope {
        case .object(let object): objects.entry(object)?.observers
        case .prefix(let prefix): prefixRoots.value(for: prefix)
        }
        guard var node = root else { return nil }
        for key in keyPath.components {
            guard let next = node.child(key) else { return nil }
            node = next
        }
        return node
    }

    /// The node of `keyPath` under `root` (``rootCreating(_:)``'s), made if missing.
    func nodeCreating(_ keyPath: ObservedPath, below root: PathNode) -> PathNode {
        var node = root
        for key in keyPath.components { node = node.childCreating(key) }
        return node
    }

    /// The root of `scope`'s tree, made if missing: found once for a request
    /// of many key paths, not once per path. It stays while a node under it
    /// is registered; it is pruned only when an observation ends.
    func rootCreating(_ scope: ObservationScope) -> PathNode {
        let root: PathNode
        switch scope {
        case .object(let object):
            let entry = objects.entryCreating(object)
            if let existing = entry.observers {
                root = existing
            } else {
                root = PathNode(key: object, parent: nil)
                objects.setObservers(root, of: entry, named: object)
            }
        case .prefix(let prefix):
            if let existing = prefixRoots.value(for: prefix) {
                root = existing
            } else {
                root = PathNode(key: prefix, parent: nil, isPrefixScope: true)
                prefixRoots.set(root, for: prefix)
            }
        }
        return root
    }

    /// Drops nodes left with no observations and no children, up to the root.
    private func prune(from start: PathNode) {
        var node = start
        while node.isEmpty {
            guard let parent = node.parent else {
                if node.isPrefixScope {
                    prefixRoots.removeValue(for: node.key)
                } else if let entry = objects.entry(node.key) {
                    objects.setObservers(nil, of: entry, named: node.key)
                }
                return
            }
            parent.removeChild(node)
            node = parent
        }
    }

    /// The value at `keys` of `object` now (the store's documents are in the
    /// same table): what a held or initial event reads when it goes out.
    func value(_ object: String, at keys: [String]) -> JSONValue? {
        guard let members = objects.entry(object)?.members else { return JSONValue.value(in: nil, at: keys) }
        return JSONValue.object(members).value(at: keys)
    }

    /// The names of the objects that have a document, in `list` order.
    var objectNames: NameIndex { objects.names }

    // MARK: Dispatch

    /// The observations of one node that a change reaches, and how they relate to it.
    struct MatchGroup {
        /// Unretained: the tree keeps its nodes while a change is dispatched
        /// (no observation ends during it), and a group is read only then.
        let nodeLink: Unmanaged<PathNode>
        let relation: ObservedChange.Relation
        /// The values at this node before and after, for ancestors and
        /// descendants; the exact node's are the change's own.
        var old: JSONValue?
        var new: JSONValue?
        /// A prefix tree's node: its events' head names the changed object.
        var scopedHead: [UInt8]?
    }

    /// A change between ``willChange`` and ``didChange``: the change and the
    /// observations it reaches. The shared controller keeps one and reuses it
    /// (the store applies one change at a time), so a change is neither copied
    /// nor allocated here; it is valid until ``didChange`` returns.
    final class PendingChange {
        /// The change, set by ``willChange`` (a shared immutable record).
        @exclusivity(unchecked) fileprivate(set) var change: ChangeRecord?
        @exclusivity(unchecked) fileprivate(set) var groups: [MatchGroup] = []
    }

    private let pending = PendingChange()

    /// Finds the observations that `change` reaches, sends their prior events,
    /// and keeps the old values that their events need. `valueBefore` reads the
    /// store as it is now, before the change. Returns nil when nobody observes.
    func willChange(_ change: ChangeRecord, valueBefore: (ArraySlice<String>) -> JSONValue?) -> PendingChange? {
        lastChangeVisits = 0
        lastChangeArrayPasses = 0
        let root = objects.entry(change.object)?.observers
        guard root != nil || !prefixRoots.isEmpty else { return nil }
        let pending = self.pending
        pending.groups.removeAll(keepingCapacity: true)
        if let root { collectGroups(under: root, of: change, valueBefore: valueBefore) }
        prefixRoots.forEachMatch(of: change.object) { prefixRoot in
            collectGroups(under: prefixRoot, of: change, valueBefore: valueBefore)
        }
        guard !pending.groups.isEmpty else { return nil }
        for index in pending.groups.indices {
            if case .descendant(let depth) = pending.groups[index].relation {
                let node = pending.groups[index].node
                if let computed = node.computed {
                    (pending.groups[index].old, pending.groups[index].new) =
                        computedValues(computed, node, depth: depth, of: change, valueBefore: valueBefore)
                    continue
                }
                (pending.groups[index].old, pending.groups[index].new) =
                    ObservedChange.descendantValues(of: change, below: node.path.suffix(depth))
            }
        }
        pending.change = change
        if pending.groups.contains(where: { $0.node.priorObservers > 0 }) { send(pending, prior: true) }
        return pending
    }

    /// The values before and after `change` of a computed key path that lies
    /// `depth` keys under the changed path, shared by every observation of
    /// the path. For an insert, remove or replace of its array, the value
    /// before from the aggregate kept for the object (or, the first time the
    /// array is seen, one pass over it), the value after in
    /// ``didChange(_:valueAfter:)`` from the change's elements; for a
    /// setting, from the kept aggregate and a pass over the new array, once
    /// (``KeptAggregates``).
    private func computedValues(_ computed: ComputedNode, _ node: PathNode, depth: Int, of change: ChangeRecord,
                                valueBefore: (ArraySlice<String>) -> JSONValue?) -> (JSONValue?, JSONValue?) {
        let path = computed.path
        guard change.kind != .setting else {
            let keys = computed.aggregates.arrayKeys(below: change.path.count, of: node.path)
            let kept = computed.aggregates.bytes
            let values = computed.aggregates.valuesAround(
                settingOf: change.object, oldArray: JSONValue.value(in: change.old, at: keys),
                newArray: JSONValue.value(in: change.new, at: keys), passes: &lastChangeArrayPasses)
            aggregateBytes += computed.aggregates.bytes - kept
            return (values.old, values.new)
        }
        // An array under an array does not exist: its value stays the empty one's.
        guard path.baseCount == change.path.count else {
            let value = path.evaluate(over: nil)
            return (value, value)
        }
        computed.awaitsNew = true
        // Read for its count; released before the change is applied, so that
        // the array is changed in place, not copied.
        let base = valueBefore(node.path.prefix(path.baseCount))
        let before = computed.aggregates.before(change.object, count: base?.arrayElements?.count ?? 0,
                                                base: { base }, passes: &lastChangeArrayPasses)
        computed.aggregateBefore = before
        return (before.value, nil)
    }

    /// Adds to ``pending`` the groups of one tree (an object's, or a prefix's
    /// that matches the object) that `change` reaches: its ancestors (the
    /// root is the whole document's), its own path, what lies under it.
    private func collectGroups(under root: PathNode, of change: ChangeRecord,
                               valueBefore: (ArraySlice<String>) -> JSONValue?) {
        let scopedHead = root.isPrefixScope ? change.object : nil
        func group(_ node: PathNode, _ relation: ObservedChange.Relation, old: JSONValue? = nil) -> MatchGroup {
            MatchGroup(node: node, relation: relation, old: old, scopedHead: scopedHead.map { node.head(forObject: $0) })
        }
        var node = root
        var reachedPath = true
        for (depth, key) in change.path.enumerated() {
            if node.hasObservations {
                // Reading the old value keeps a reference to it, which makes the
                // store copy that part of the document: only do it when asked.
                let wantsOld = node.containsObservation { $0.options.contains(.old) }
                pending.groups.append(group(node, .ancestor, old: wantsOld ? valueBefore(change.path[..<depth]) : nil))
            }
            guard let next = node.child(key) else {
                reachedPath = false
                break
            }
            node = next
            lastChangeVisits += 1
        }
        guard reachedPath else { return }
        if node.hasObservations {
            // Its values are the change's own: send reads them there, uncopied.
            pending.groups.append(group(node, .exact))
        }
        if node.hasChildren {
            node.forEachDescendant { descendant, depth in
                lastChangeVisits += 1
                if descendant.hasObservations {
                    pending.groups.append(group(descendant, .descendant(depth: depth)))
                }
            }
        }
    }

    /// Where a change goes, found before it is applied.
    enum Route {
        /// Nothing observes the object, or nothing at or around the path.
        case unobserved
        /// The common case, a setting of a one-key path: the observations it
        /// reaches are all on that path's node and none wants prior events.
        /// No prior events, no old values to keep: ``didChange(_:exactlyAt:)``
        /// after applying it sends everything. Unretained: nothing between
        /// the route and the dispatch ends an observation, so the tree keeps it.
        case exactly(Unmanaged<PathNode>)
        /// Anything else: ``willChange(_:valueBefore:)`` and ``didChange(_:valueAfter:)``.
        case general
    }

    /// Where `change` goes, given its object's entry (the store found it).
    /// Costs, for a one-key path, the node's lookup; the general route walks
    /// again (a rarer change).
    /// The nodes are read unretained (the entry and the tree hold them): no
    /// reference counting on the way to a set's observers.
    func route(of change: ChangeRecord, in entry: ObjectTable.Entry?) -> Route {
        if !prefixRoots.isEmpty, prefixRoots.hasMatch(of: change.object) { return .general }
        guard let rootLink = entry?.observers.map(Unmanaged.passUnretained) else {
            lastChangeVisits = 0
            return .unobserved
        }
        guard change.path.count == 1, change.kind == .setting else { return .general }
        return rootLink._withUnsafeGuaranteedRef { root in
            guard !root.hasObservations else { return .general }
            guard let nodeLink = change.path.withUnsafeBufferPointer({ root.childUnretained($0[0]) }) else {
                // The root holds no observations of the whole document (checked above).
                lastChangeVisits = 0
                return .unobserved
            }
            return nodeLink._withUnsafeGuaranteedRef { node in
                guard !node.hasChildren, node.priorObservers == 0 else { return .general }
                return node.hasObservations ? .exactly(nodeLink) : .unobserved
            }
        }
    }

    /// Sends the events of `change`, applied, to the observations of `node`
    /// (its ``Route/exactly(_:)`` route).
    func didChange(_ change: ChangeRecord, exactlyAt node: Unmanaged<PathNode>) {
        lastChangeVisits = 1
        let group = MatchGroup(nodeLink: node, relation: .exact, old: nil, new: nil, scopedHead: nil)
        withUnsafePointer(to: group) { send(change, $0, prior: false) }
    }

    /// Sends the change events, once the store has applied the change.
    /// `valueAfter` reads the store as it is now.
    func didChange(_ pending: PendingChange, valueAfter: (ArraySlice<String>) -> JSONValue?) {
        for index in pending.groups.indices {
            let node = pending.groups[index].node
            if pending.groups[index].isAncestor {
                pending.groups[index].new = valueAfter(node.path[...])
            } else if let computed = node.computed, computed.awaitsNew {
                let change = pending.change!
                let arrayPath = node.path.prefix(computed.path.baseCount)
                let kept = computed.aggregates.bytes
                pending.groups[index].new = computed.aggregates.valueAfter(
                    change, of: change.object, before: computed.aggregateBefore, arrayAfter: { valueAfter(arrayPath) },
                    passes: &lastChangeArrayPasses)
                aggregateBytes += computed.aggregates.bytes - kept
                computed.aggregateBefore = nil
                computed.awaitsNew = false
            }
        }
        send(pending, prior: false)
        // The list and the change are dropped by the next willChange, which
        // empties the list anyway: emptying it twice per change showed.
    }

    private func send(_ pending: PendingChange, prior: Bool) {
        let change = pending.change!
        pending.groups.withUnsafeBufferPointer { groups in
            for index in groups.indices {
                send(change, groups.baseAddress! + index, prior: prior)
            }
        }
    }

    /// Sends one node's events. First the encodings its observations need
    /// (``EventVariantEncoder``, one per variant, into one reused buffer);
    /// then the per-event loop, which only copies bytes: no reference
    /// counting (the node's array and the controllers outlive it; see
    /// ``ObservationInfo/owner``), no allocation. The change and its group
    /// are read in place: copying them cost more than encoding the event.
    private func send(_ change: ChangeRecord, _ group: UnsafePointer<MatchGroup>, prior: Bool) {
        // A resync over etcd tells only the values that differ (docs/CLUSTER.md).
        if change.isResync, !Self.valueChanged(change, group, prior: prior) { return }
        group.pointee.nodeLink._withUnsafeGuaranteedRef { node in send(change, group, at: node, prior: prior) }
    }

    /// ``send(_:_:prior:)`` with the group's node, borrowed. The encodings'
    /// heads, the event buffer and the await collector are read in place,
    /// without a reference to count.
    @inline(__always)
    private func send(_ change: ChangeRecord, _ group: UnsafePointer<MatchGroup>, at node: PathNode, prior: Bool) {
        var variants: EncodingVariants
        if prior {
            variants = .none
            // A congested client's events are held without their bytes: when
            // every observation here is such, nothing is encoded.
            var holds = false
            node.forEachObservation { info in
                guard info.options.contains(.prior), !info.isLeaving else { return }
                if info.owner.isCongested {
                    holds = true
                } else {
                    variants.insert(info.encodingVariant)
                }
            }
            guard !variants.isEmpty || holds else { return }
        } else {
            // The node keeps what its observations read: no walk before the
            // one that delivers, unless some client is congested; then a node
            // whose observations are all such clients' encodes nothing (they
            // hold the event without bytes, and a large value's encoding per
            // change would be wasted work in the turn).
            variants = node.encodingVariants
            guard !variants.isEmpty else { return }
            if coalescingClients > 0, !Self.anyTakesBytes(node) { variants = .none }
        }
        let ends = encoder.encode(variants, of: change, group, at: node, prior: prior)
        var visits = 0
        // Whether the value here changed, for `distinct`: found once per group.
        var changed: Bool?
        var made = 0
        // A prefix's observations reach only clients that may read the changed object.
        let policy = node.isPrefixScope ? accessPolicy : nil
        // Found once per group, not per event: false unless a change with
        // `await` is dispatched (the collector itself is read only then).
        let collectsAwaits = !prior && awaitCollector != nil
        // Found once per group: whether any client's observations wait to leave the index.
        let skipsLeaving = !leaving.isEmpty
        // The buffer is neither changed nor released until the loop ends.
        let all = encoder.bytes
        // `--max-client-memory`'s room for these events (ClientMemoryRoom): a subtraction per event.
        let roomBefore = clientMemory.room
        var room = roomBefore
        do {
            var lineVariant = -1
            var line = UnsafeRawBufferPointer(start: nil, count: 0)
            // When every observation here reads one encoding (the usual node), its
            // bytes are found once, not each observation's variant per event.
            let oneVariant = variants.isSingle
            if oneVariant {
                lineVariant = variants.first
                line = ends.line(lineVariant, in: all)
            }
            node.forEachObservation { info in
                visits &+= 1
                if skipsLeaving, info.isLeaving { return }
                let options = info.options
                if prior && !options.contains(.prior) { return }
                if let policy, !policy.allows(.read, on: change.object, for: info.owner.credentials) { return }
                if info.isQuiet {
                    if !passes(info, change, group, prior: prior, changed: &changed) { return }
                    if !admitsThrottled(info, change, prior: prior) {
                        if collectsAwaits { awaitCollector!.note(info, folded: true) }
                        return
                    }
                }
                if collectsAwaits { awaitCollector!.note(info, folded: false) }
                made &+= 1
                if !oneVariant {
                    let variant = info.encodingVariant
                    // Runs of observations read the same encoding: find its bytes once per run.
                    if variant != lineVariant {
                        line = ends.line(variant, in: all)
                        lineVariant = variant
                    }
                }
                Unmanaged.passUnretained(info.owner)._withUnsafeGuaranteedRef { controller in
                    if controller.takesLiveEventBytes {
                        guard line.count <= room else {
                            room = -1
                            return controller.deliverPastClientMemory(
                                line: line, contextFragment: info.contextFragmentBytes, change: change, for: info,
                                isPrior: prior)
                        }
                        room &-= line.count
                    }
                    // Two calls, so that the usual one, without a context, is inlined without its code.
                    if let fragment = info.contextFragmentBytes {
                        controller.deliver(line: line, contextFragment: fragment, change: change, for: info,
                                           isPrior: prior)
                    } else {
                        controller.deliver(line: line, contextFragment: nil, change: change, for: info, isPrior: prior)
                    }
                }
            }
        }
        if roomBefore != .max { clientMemory.unflushed &+= roomBefore - max(room, 0) }
        lastChangeVisits += visits
        eventCounts.add(made, of: change.kind)
    }

    /// Whether any observation of `node` belongs to a client that takes an
    /// event's bytes now (``ClientController/takesEventBytes``).
    @inline(never)
    private static func anyTakesBytes(_ node: PathNode) -> Bool {
        node.containsObservation { !$0.isLeaving && $0.owner.takesEventBytes }
    }

    /// Whether a quiet observation's filter lets this group's event out: its
    /// kind as the observation sees it, and for `distinct` whether the value
    /// at its key path changed (the change's own value decides for the path
    /// and what lies above it; a descendant compares its own values), found
    /// once per group into `changed`.
    @inline(never)
    private func passes(_ info: ObservationInfo, _ change: ChangeRecord, _ group: UnsafePointer<MatchGroup>,
                        prior: Bool, changed: inout Bool?) -> Bool {
        let isExact = group.pointee.isExact
        return info.filter.passes(kind: isExact ? change.kind : .setting) {
            if let known = changed { return known }
            let found = Self.valueChanged(change, group, prior: prior)
            changed = found
            return found
        }
    }

    /// Whether a quiet observation's throttle lets this event out now (it
    /// has none, or its interval is not open); else the event is folded
    /// into the one sent when the interval ends.
    @inline(never)
    private func admitsThrottled(_ info: ObservationInfo, _ change: ChangeRecord, prior: Bool) -> Bool {
        guard let interval = info.filter.throttle else { return true }
        return info.owner.admitThrottled(change, for: info, interval: interval, isPrior: prior,
                                         now: throttleSchedule.clock())
    }

    private static func valueChanged(_ change: ChangeRecord, _ group: UnsafePointer<MatchGroup>, prior: Bool) -> Bool {
        switch group.pointee.relation {
        case .exact, .ancestor:
            return change.changesValue
        case .descendant:
            // A computed value after an insert, remove or replace is known only once it is applied.
            if prior, change.kind != .setting, group.pointee.node.computed != nil { return true }
            return valuesDiffer(group.pointee.old, group.pointee.new)
        }
    }

    // MARK: Inspection

    /// Every registered observation, for tests and debugging (a full walk).
    public var debugDescription: String {
        var lines: [String] = ["<SharedController observations:\(observationCount)>"]
        let roots = objects.observationRoots.map { (ObservationScope.object($0.name), $0.root) }
            + prefixRoots.all.map { (ObservationScope.prefix($0.prefix), $0.value) }
        for (scope, root) in roots.sorted(by: { $0.0 < $1.0 }) {
            root.forEachObservation { info in
                lines.append("  \(scope) (whole document) \(info.options.wireNames)")
            }
            root.forEachDescendant { node, _ in
                node.forEachObservation { info in
                    lines.append("  \(scope) \(info.keyPath) \(info.options.wireNames)")
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension SharedController.MatchGroup {
    init(node: PathNode, relation: ObservedChange.Relation, old: JSONValue? = nil, scopedHead: [UInt8]? = nil) {
        self.init(nodeLink: Unmanaged.passUnretained(node), relation: relation, old: old, new: nil,
                  scopedHead: scopedHead)
    }

    /// The group's node (retained by the caller: for the rarer paths).
    var node: PathNode { nodeLink.takeUnretainedValue() }

    var isExact: Bool { relation.isExact }

    var isAncestor: Bool {
        if case .ancestor = relation { return true }
        return false
    }
}
