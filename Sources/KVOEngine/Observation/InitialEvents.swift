/// The initial events of one `observe` request, as a cursor: the objects it
/// covers (one, or every object under a prefix, in `list` order) times the
/// observations it made, in that order.
///
/// The events are written while the client's output has room; what does not
/// fit stays here, as a position, and is written as the client drains
/// (``ClientController``), each from the store's state at that moment: no
/// value is kept in between, however many key paths or objects the request
/// covers.
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
    private var isFinished = false

    init(scope: ObservationScope, infos: [ObservationInfo], seq: UInt64) {
        self.scope = scope
        self.infos = infos
        self.seq = seq
        remaining = infos.count
    }

    /// The next event to write, as its object and observation, or nil when
    /// every one was written; it stays next until ``removeNext()``. `names`
    /// are the objects that exist now; `mayRead` says which the client may
    /// hear of.
    func next(in names: NameIndex, mayRead: (String) -> Bool) -> (object: String, info: ObservationInfo)? {
        while !isFinished {
            if let object, nextInfo < infos.count { return (object, infos[nextInfo]) }
            nextInfo = 0
            switch scope {
            case .object(let name):
                if object == nil { object = name } else { isFinished = true }
            case .prefix(let prefix):
                var found: String?
                names.forEach(prefix: prefix, after: object) { name in
                    guard mayRead(name) else { return true }
                    found = name
                    return false
                }
                if let found { object = found } else { isFinished = true }
            }
        }
        return nil
    }

    /// Moves past the event ``next(in:mayRead:)`` returned.
    func removeNext() {
        nextInfo += 1
    }
}
