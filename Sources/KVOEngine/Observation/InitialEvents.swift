/// The initial events of one `observe` request, as a cursor: the objects it
/// covers (one, or every object under a prefix, in `list` order) times the
/// observations it made, in that order.
///
/// The events are written while the client's output has room, at most a
/// slice (``SharedController/sliceBudget``) per loop turn; what does not fit
/// stays here, as a position, and is written in the next turns' slices or,
/// if the client fell behind, as it drains (``ClientController``), each from
/// the store's state at that moment: no value is kept in between, however
/// many key paths or objects the request covers.
final class InitialEvents {
    let scope: ObservationScope
    let infos: [ObservationInfo]
    /// The seq the events carry: the request's.
    let seq: UInt64
    /// How many of ``infos`` are still observed: the cursor is dropped when
    /// none is (``HeldEvents/drop(_:)``).
    var remaining: Int
    /// The object being written, nil before the first.
    private var object: String?
    /// The next of ``infos`` to write for ``object``.
    private var nextInfo = 0
    private(set) var isFinished = false
    /// While the cursor waits for its next slice and the client keeps up,
    /// change events go out live: the objects each observation (by its
    /// index in ``infos``) had one for, whose initial event that change
    /// event stands for (nil until the first).
    private var sentAhead: [Int: Set<String>]?
    /// Where each observation is in ``infos``, once the cursor waits for slices.
    private var positions: [ObjectIdentifier: Int]?

    init(scope: ObservationScope, infos: [ObservationInfo], seq: UInt64) {
        self.scope = scope
        self.infos = infos
        self.seq = seq
        remaining = infos.count
    }

    /// The next event to write, as its object and observation, or nil when
    /// every one was written (``isFinished``) or `budget` ran out; it stays
    /// next until ``removeNext()``. Each object visited costs one of
    /// `budget`. `names` are the objects that exist now; `mayRead` says which
    /// the client may hear of.
    func next(in names: NameIndex, budget: inout Int,
              mayRead: (String) -> Bool) -> (object: String, info: ObservationInfo)? {
        while !isFinished, budget > 0 {
            if let object, nextInfo < infos.count { return (object, infos[nextInfo]) }
            nextInfo = 0
            switch scope {
            case .object(let name):
                if object == nil { object = name } else { isFinished = true }
            case .prefix(let prefix):
                var found: String?
                var passed: String?
                var visits = budget
                names.forEach(prefix: prefix, after: object) { name in
                    visits -= 1
                    guard mayRead(name) else {
                        passed = name
                        return visits > 0
                    }
                    found = name
                    return false
                }
                budget = visits
                if let found {
                    object = found
                } else if let passed, budget <= 0 {
                    // Out of budget among objects the client may not read: go on after them next time.
                    object = passed
                    nextInfo = infos.count
                } else {
                    isFinished = true
                }
            }
        }
        return nil
    }

    /// Moves past the event ``next(in:budget:mayRead:)`` returned.
    func removeNext() {
        nextInfo += 1
    }

    /// Whether `info` is one of this cursor's observations.
    func covers(_ info: ObservationInfo) -> Bool {
        position(of: info) != nil
    }

    /// A change event of `info` for `object` went out live before the
    /// cursor reached it: it stands for that initial event.
    func noteSentAhead(_ info: ObservationInfo, object: String) {
        guard let position = position(of: info) else { return }
        if sentAhead == nil { sentAhead = [:] }
        sentAhead![position, default: []].insert(object)
    }

    /// Whether a change event went out for `info` and `object` before the
    /// cursor reached them (``noteSentAhead(_:object:)``).
    func wasSentAhead(_ info: ObservationInfo, object: String) -> Bool {
        guard let sentAhead, let position = position(of: info) else { return false }
        return sentAhead[position]?.contains(object) ?? false
    }

    private func position(of info: ObservationInfo) -> Int? {
        if positions == nil {
            positions = Dictionary(infos.enumerated().map { (ObjectIdentifier($0.element), $0.offset) },
                                   uniquingKeysWith: { first, _ in first })
        }
        return positions?[ObjectIdentifier(info)]
    }
}
