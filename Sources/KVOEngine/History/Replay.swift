import KVOValues

/// What `observe` with `since` delivers before it goes live: the changes
/// after the resume point that the request's new observations match, each
/// exactly as live dispatch sent it, in the order it sent them.
///
/// The history is walked forwards once, in seq order, and each event is
/// delivered as it is found (and encoded only if it goes out now: see
/// ``ClientController/deliverReplayed(_:for:isPrior:encode:)``), so a replay
/// never holds more than one event, whatever it covers. Within a change, the
/// observations are found by the walk the live dispatch makes
/// (``SharedController``): ancestors of the changed path from the root down,
/// the path itself, then what lies under it, depth first; prior events of the
/// change first. Each event is encoded by the same function as the live one
/// from the same values, so a client cannot tell a replayed event from a live one.
///
/// An observation of an ancestor of a changed path was sent the values there
/// before and after. Those come from the object's document as of each
/// change: found for the resume point by undoing the later changes from the
/// current document (``ChangeRecord/valueBefore(at:after:)``), then carried
/// forwards change by change (``ChangeRecord/apply(to:)``); the value before
/// a change is undone from the value after it, as for a held event. One
/// document per object is kept, and only for objects that such an
/// observation sees changed.
struct Replay {
    /// The request's observations, by their node in the index (a client has
    /// at most one per node).
    private let observations: [ObjectIdentifier: ObservationInfo]
    /// The root of their tree: the object's, or the prefix's.
    private let root: PathNode
    /// The documents, as of the change being replayed, of the objects that need them.
    private var documents: [String: Document] = [:]
    /// The observations one change reaches, reused from change to change.
    private var reached: [(info: ObservationInfo, relation: ObservedChange.Relation)] = []
    /// The aggregates of computed key paths' arrays as of the change being
    /// replayed, by node: a change costs its own elements, and an array is
    /// passed over when first seen or set whole, not twice per change.
    private var aggregates: [ObjectIdentifier: KeptAggregates] = [:]
    /// The values of the computed key paths this change reaches, by node,
    /// found once per change (the aggregates move on with each).
    private var computedValues: [ObjectIdentifier: (old: JSONValue?, new: JSONValue?)] = [:]

    /// An object's document; nil when the object has none.
    private struct Document {
        var value: JSONValue?
    }

    /// `observations`: registered, all in one tree (one request's).
    init(observations: [ObservationInfo]) {
        var byNode: [ObjectIdentifier: ObservationInfo] = [:]
        for info in observations { byNode[ObjectIdentifier(info.node!)] = info }
        self.observations = byNode
        var root = observations[0].node!
        while let parent = root.parent { root = parent }
        self.root = root
    }

    /// Delivers to `client` the events of `changes` (oldest first) to the
    /// objects `including` accepts. `documentNow` reads an object's document now.
    mutating func run<Changes: BidirectionalCollection<ChangeRecord>>(
        over changes: Changes, including: (String) -> Bool, documentNow: (String) -> JSONValue?,
        to client: ClientController
    ) {
        findDocuments(over: changes, including: including, documentNow: documentNow)
        for change in changes where including(change.object) {
            guard !client.isClosed, client.disconnectReason == nil else { return }
            replay(change, to: client)
        }
    }

    /// Finds the documents as of the resume point of the objects whose
    /// changes an observation sees from above: one pass to name them, one
    /// backwards to undo their changes.
    private mutating func findDocuments<Changes: BidirectionalCollection<ChangeRecord>>(
        over changes: Changes, including: (String) -> Bool, documentNow: (String) -> JSONValue?
    ) {
        var needed: Set<String> = []
        // A computed key path reads its array as of each change.
        let computes = observations.values.contains { $0.node?.computed != nil }
        for change in changes where !needed.contains(change.object) && including(change.object) {
            if computes || hasObservationAbove(change) { needed.insert(change.object) }
        }
        guard !needed.isEmpty else { return }
        for change in changes.reversed() where needed.contains(change.object) {
            // Undone where it lies, so that the document is not copied per change.
            if documents.index(forKey: change.object) == nil {
                documents[change.object] = Document(value: documentNow(change.object))
            }
            change.undo(document: &documents[change.object]!.value)
        }
    }

    private func hasObservationAbove(_ change: ChangeRecord) -> Bool {
        var node = root
        for key in change.path {
            if observations[ObjectIdentifier(node)] != nil { return true }
            guard let next = node.child(key) else { return false }
            node = next
        }
        return false
    }

    private mutating func replay(_ change: ChangeRecord, to client: ClientController) {
        // Every change of the object, reached or not, so that the document stays exact.
        if documents[change.object] != nil { change.apply(to: &documents[change.object]!.value) }
        collect(change)
        guard !reached.isEmpty else { return }
        // Read after the change; the value before is undone from it where an
        // event asks for it, so that the document is changed in place, not copied.
        let after = documents[change.object]?.value
        computedValues.removeAll(keepingCapacity: true)
        for (info, relation) in reached {
            guard case .descendant = relation, let node = info.node, let computed = node.computed else { continue }
            computedValues[ObjectIdentifier(node)] = values(of: change, at: node, computed.path, after: after)
        }
        for (info, relation) in reached where info.options.contains(.prior) {
            deliver(change, to: info, relation, after: after, prior: true, client)
        }
        for (info, relation) in reached {
            deliver(change, to: info, relation, after: after, prior: false, client)
        }
    }

    /// A computed key path's values around `change`, `after` the object's
    /// document after it, from the aggregate kept as of the change before.
    private mutating func values(of change: ChangeRecord, at node: PathNode, _ path: ComputedKeyPath,
                                 after: JSONValue?) -> (old: JSONValue?, new: JSONValue?) {
        let id = ObjectIdentifier(node)
        var kept = aggregates.removeValue(forKey: id) ?? KeptAggregates(path)
        defer { aggregates[id] = kept }
        var passes = 0
        guard let (removed, added) = change.collectionElements else {
            let keys = kept.arrayKeys(below: change.path.count, of: node.path)
            let values = kept.valuesAround(settingOf: change.object, oldArray: JSONValue.value(in: change.old, at: keys),
                                           newArray: JSONValue.value(in: change.new, at: keys), passes: &passes)
            return (values.old, values.new)
        }
        // An array under an array does not exist: its value stays the empty one's.
        guard path.baseCount == change.path.count else {
            let value = path.evaluate(over: nil)
            return (value, value)
        }
        let arrayPath = Array(node.path.prefix(path.baseCount))
        let arrayAfter = JSONValue.value(in: after, at: arrayPath)
        let countAfter = arrayAfter?.arrayElements?.count ?? 0
        let countBefore = countAfter - added.count + removed.count
        if path.op == .count { return (.number(JSONNumber(countBefore)), .number(JSONNumber(countAfter))) }
        // Undone from the array after only when no aggregate is kept: a copy of it.
        let before = kept.before(change.object, count: countBefore,
                                 base: { change.valueBefore(at: arrayPath, after: arrayAfter) }, passes: &passes)
        let new = kept.valueAfter(change, of: change.object, before: before, arrayAfter: { arrayAfter },
                                  passes: &passes)
        return (before.value, new)
    }

    /// The request's observations that `change` reaches, in the live dispatch's order.
    private mutating func collect(_ change: ChangeRecord) {
        reached.removeAll(keepingCapacity: true)
        var node = root
        for key in change.path {
            if let info = observations[ObjectIdentifier(node)] { reached.append((info, .ancestor)) }
            guard let next = node.child(key) else { return }
            node = next
        }
        if let info = observations[ObjectIdentifier(node)] { reached.append((info, .exact)) }
        guard node.hasChildren, reached.count < observations.count else { return }
        node.forEachDescendant { descendant, depth in
            if let info = observations[ObjectIdentifier(descendant)] {
                reached.append((info, .descendant(depth: depth)))
            }
        }
    }

    /// Whether a quiet observation's filter let this event out live: the
    /// same rule as ``SharedController``'s, from the same values.
    private func passes(_ change: ChangeRecord, _ info: ObservationInfo, _ relation: ObservedChange.Relation,
                        after: JSONValue?) -> Bool {
        info.filter.passes(kind: relation.isExact ? change.kind : .setting) {
            valueChanged(change, info, relation, after: after)
        }
    }

    private func valueChanged(_ change: ChangeRecord, _ info: ObservationInfo, _ relation: ObservedChange.Relation,
                              after: JSONValue?) -> Bool {
        guard case .descendant = relation else { return change.changesValue }
        let values = computedValues[ObjectIdentifier(info.node!)]
            ?? ObservedChange.values(of: change, at: info.node!, relation, wantsOld: true) {
                JSONValue.value(in: after, at: $0)
            }
        return valuesDiffer(values.old, values.new)
    }

    private func deliver(_ change: ChangeRecord, to info: ObservationInfo, _ relation: ObservedChange.Relation,
                         after: JSONValue?, prior: Bool, _ client: ClientController) {
        // A resync told only the values that differed, live.
        if change.isResync, !valueChanged(change, info, relation, after: after) { return }
        if info.isQuiet {
            if !passes(change, info, relation, after: after) { return }
            // A throttle folds the replay too: the first change, then the latest one when its interval ends.
            if let interval = info.filter.throttle,
               !client.admitThrottled(change, for: info, interval: interval, isPrior: prior,
                                      now: client.shared.throttleSchedule.clock()) { return }
        }
        client.deliverReplayed(change, for: info, isPrior: prior) { output in
            let node = info.node!
            let (old, new) = computedValues[ObjectIdentifier(node)]
                ?? ObservedChange.values(of: change, at: node, relation, wantsOld: info.options.contains(.old)) {
                    JSONValue.value(in: after, at: $0)
                }
            let event = ObservedChange(change, relation, old: old, new: new, options: info.options, prior: prior)
            EventEncoder.write(event, head: info.eventHead(forObject: change.object), compact: info.isCompact,
                               to: &output)
        }
    }
}
