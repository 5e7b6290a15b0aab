/// A history as Porcupine walks it: each operation's call and return entries
/// in one doubly linked list sorted by time (a call before a return at the
/// same time, so operations that touch are taken as concurrent; unknown
/// outcomes return at infinity, after every answer). Linearizing an operation
/// lifts its two entries out of the list; backtracking puts them back where
/// they were.
struct EntryList {
    /// Entry 0 is the head, `tail` the end; entries 1... are the history's.
    private(set) var next: [Int]
    private var previous: [Int]
    /// For a call entry, its operation's return entry; -1 for a return entry.
    let match: [Int]
    /// The operation of each entry.
    let operation: [Int]
    let tail: Int

    init(calls: [Double], returns: [Double]) {
        precondition(calls.count == returns.count)
        // (time, is a return, operation): sorted, calls first at equal times.
        var entries: [(time: Double, isReturn: Bool, operation: Int)] = []
        entries.reserveCapacity(calls.count * 2)
        for index in calls.indices {
            entries.append((calls[index], false, index))
            entries.append((returns[index], true, index))
        }
        entries.sort { a, b in
            if a.time != b.time { return a.time < b.time }
            if a.isReturn != b.isReturn { return !a.isReturn }
            return a.operation < b.operation
        }
        let count = entries.count
        tail = count + 1
        next = Array(1...(count + 1)) + [-1]
        previous = [-1] + Array(0...count)
        var operation = Array(repeating: -1, count: count + 2)
        var match = Array(repeating: -1, count: count + 2)
        var callEntry = Array(repeating: 0, count: calls.count)
        for (position, entry) in entries.enumerated() {
            operation[position + 1] = entry.operation
            if entry.isReturn {
                match[callEntry[entry.operation]] = position + 1
            } else {
                callEntry[entry.operation] = position + 1
            }
        }
        self.operation = operation
        self.match = match
    }

    var first: Int { next[0] }
    var isEmpty: Bool { next[0] == tail }
    func isCall(_ entry: Int) -> Bool { match[entry] >= 0 }

    /// Takes a call entry and its return entry out of the list.
    mutating func lift(_ call: Int) {
        unlink(call)
        unlink(match[call])
    }

    /// Puts back what ``lift(_:)`` took out, in the reverse order.
    mutating func unlift(_ call: Int) {
        relink(match[call])
        relink(call)
    }

    private mutating func unlink(_ entry: Int) {
        next[previous[entry]] = next[entry]
        previous[next[entry]] = previous[entry]
    }

    private mutating func relink(_ entry: Int) {
        next[previous[entry]] = entry
        previous[next[entry]] = entry
    }
}
