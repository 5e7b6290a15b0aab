/// The events an observation would have been sent for changes it missed:
/// what `observe` with `since` delivers before it goes live.
///
/// Each replayed event is encoded by the same function as the live one
/// (``EventEncoder/change(_:head:exact:old:new:options:prior:)``) from the
/// same values, so a client cannot tell a replayed event from a live one.
enum Replay {
    struct Event {
        let seq: UInt64
        let prior: Bool
        /// The observed key path's length: live dispatch reaches ancestors of
        /// a change first, then its own path, then descendants.
        let depth: Int
        let bytes: [UInt8]
        let info: ObservationInfo
        /// The changed object, for a prefix observation's event.
        let object: String?
    }

    /// The events for `info` (registered, so its key path is encoded) from
    /// `changes` (its object's, oldest first, all of them since the resume
    /// point). `valueNow` is the value at its key path now; `head` is the head
    /// of its events for that object (``PathNode/head(forObject:)``).
    static func events(for info: ObservationInfo, changes: [ChangeRecord], valueNow: JSONValue?,
                       head: [UInt8]) -> [Event] {
        let keyPath = info.keyPath.components
        let related = changes.filter { $0.relation(to: keyPath) != .unrelated }
        guard !related.isEmpty else { return [] }
        let object = info.scope.isPrefix ? related[0].object : nil
        // Values at the key path around each change, found by undoing from
        // now; only changes below the key path need them.
        var before: [JSONValue?] = []
        var after: [JSONValue?] = []
        if related.contains(where: { $0.relation(to: keyPath) == .above }) {
            before = Array(repeating: nil, count: related.count)
            after = before
            var value = valueNow
            for index in related.indices.reversed() {
                after[index] = value
                value = related[index].valueBefore(at: keyPath, after: value)
                before[index] = value
            }
        }
        var events: [Event] = []
        for (index, change) in related.enumerated() {
            let exact = change.path.count == keyPath.count
            let old: JSONValue?
            let new: JSONValue?
            switch change.relation(to: keyPath) {
            case .atOrUnder where exact:
                (old, new) = (change.old, change.new)
            case .atOrUnder:
                let rest = keyPath[change.path.count...]
                let collection = change.kind != .setting
                (old, new) = collection ? (nil, nil) : (change.old?.value(at: rest), change.new?.value(at: rest))
            case .above:
                (old, new) = (before[index], after[index])
            case .unrelated:
                continue
            }
            for prior in info.options.contains(.prior) ? [true, false] : [false] {
                let bytes = EventEncoder.change(change, head: head, exact: exact, old: old, new: new,
                                                options: info.options, prior: prior)
                events.append(Event(seq: change.seq, prior: prior, depth: keyPath.count, bytes: bytes, info: info,
                                    object: object))
            }
        }
        return events
    }

    /// Puts the events of several observations in the order live dispatch
    /// would have sent them: by seq, prior events of a change first, then by
    /// key path length.
    static func merged(_ events: [Event]) -> [Event] {
        events.enumerated().sorted { lhs, rhs in
            let (l, r) = (lhs.element, rhs.element)
            if l.seq != r.seq { return l.seq < r.seq }
            if l.prior != r.prior { return l.prior }
            if l.depth != r.depth { return l.depth < r.depth }
            return lhs.offset < rhs.offset
        }.map(\.element)
    }
}
