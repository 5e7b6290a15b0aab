import KVOValues

/// `add`: a counter without a compare-and-set loop (docs/PROTOCOL.md,
/// "Counters"). The sum is computed from the value there now and written as
/// a `set` of it: one change of kind `setting`, with the old and new values,
/// that history, the data directory, etcd and observers take as any set.
extension Engine {
    /// Adds `amount` to the integer at `keyPath` of `object` (nothing there
    /// counts as 0, and missing objects on the way are made, as a set makes
    /// them). Returns the change's seq and the sum it wrote.
    func add(_ object: String, _ keyPath: ObservedPath, by amount: Int,
             lease: Lease? = nil) throws(KVOEngineError) -> (seq: UInt64, sum: Int) {
        let sum = try sum(object, keyPath, adding: amount)
        return (try set(object, keyPath, .number(JSONNumber(sum)), lease: lease), sum)
    }

    /// The sum an add of `amount` at `keyPath` of `object` would write,
    /// checked against the value there now; nothing is changed. Throws
    /// `bad_request`, naming the value, for one that is not a number, not an
    /// integer or past 2^53, and for a sum past it.
    func sum(_ object: String, _ keyPath: ObservedPath, adding amount: Int) throws(KVOEngineError) -> Int {
        let place = "\(object) \(keyPath)"
        let current: Int
        switch try store.checkedValue(object, at: keyPath.components).value {
        case nil:
            current = 0
        case .number(let number)?:
            switch AddedInteger(number) {
            case .integer(let value): current = value
            case .notAnInteger:
                throw .badRequest("\(place) is \(number), not an integer: add takes integers written without "
                    + "fraction or exponent; nothing changed")
            case .pastLimit:
                throw .badRequest("\(place) is \(number), past 2^53 (\(AddedInteger.limit)), where integers are "
                    + "no longer exact; nothing changed")
            }
        case let other?:
            throw .badRequest("\(place) is \(other.typeName), not a number; nothing changed")
        }
        // Both within ±2^53: the sum cannot overflow an Int.
        let sum = current + amount
        guard (-AddedInteger.limit...AddedInteger.limit).contains(sum) else {
            throw .badRequest("\(place) would be \(sum) (\(current) + \(amount)), past 2^53 "
                + "(\(AddedInteger.limit)), where integers are no longer exact; nothing changed")
        }
        return sum
    }

    /// Right after `operation` was applied: the sum it wrote if it is an
    /// add, read back from the store; nil for any other op.
    func addedSum(of operation: Operation) -> Int? {
        guard case .add(let object, let keyPath, _) = operation,
              case .number(let number)? = store.value(object, at: keyPath.components),
              case .integer(let sum) = AddedInteger(number) else { return nil }
        return sum
    }
}

extension ReplyEncoder {
    /// A single change's reply over etcd: an add's (``added(_:seq:)``) when
    /// `sum` is not nil, else only the seq.
    init(seq: UInt64, sum: Int?) {
        if let sum { added(sum, seq: seq) } else { self.seq(seq) }
    }

    /// An add's reply: the sum it wrote, its modSeq (the change's seq) and the seq.
    mutating func added(_ sum: Int, seq: UInt64) {
        field(.value, integer: sum)
        field(.modSeq, integer: seq)
        self.seq(seq)
    }

    /// A batch's `values` when it holds an add: each add's sum, `null` for
    /// the other ops; nothing for a batch without one.
    mutating func sums(_ sums: [Int?]) {
        guard sums.contains(where: { $0 != nil }) else { return }
        field(.values, .array(sums.map { $0.map { .number(JSONNumber($0)) } ?? .null }))
    }
}
