import KVOValues

/// What one collection operator needs to know of an array, gathered in one
/// pass and then kept up to date by a change's inserted and removed elements
/// instead of another pass (``update(removing:adding:)``).
///
/// Every value is the one a pass over the array in any order would give, so
/// a kept aggregate never drifts from one computed afresh: sums are exact
/// (``ExactSum``), and among equal numbers written differently (`1`, `1.0`)
/// `@min`/`@max` give the spelling first in byte order.
struct CollectionAggregate {
    /// How many extremes a kept `@min`/`@max` holds: it needs another pass only
    /// once that many of them were removed, and never holds more numbers than
    /// its array does.
    static let reserveLimit = 64

    let op: CollectionOperator
    /// The element key path after the operator (`amount` in `@sum.amount`).
    let elementPath: [String]
    private(set) var count = 0
    /// How many elements have a number at the element path.
    private var numbers = 0

    // `@sum`, `@avg`
    /// The integers' sum, exact (2⁶⁴ of them fit).
    private var integerSum: Int128 = 0
    /// The other numbers' sum, exact.
    private var otherSum = ExactSum()
    /// How many numbers are not 64-bit integers, and of them how many are
    /// beyond every double (`1e400`): their sum is no JSON number.
    private var nonIntegers = 0
    private var infinities = 0

    // `@min`, `@max`
    /// The least (`@min`) or greatest (`@max`) numbers, best first; every
    /// number of the array not among them comes after the last.
    private var reserve: [Extreme] = []
    private var reserveLimit: Int
    /// Whether ``reserve`` holds every number of the array.
    private var reserveIsWhole = true

    private struct Extreme {
        let value: Double
        let number: JSONNumber
    }

    /// About the bytes it keeps: its counters, the exact sum's limbs, each
    /// kept extreme with its number's spelling.
    var heldBytes: Int {
        128 + otherSum.heldBytes + reserve.reduce(32) { $0 + 48 + $1.number.literal.utf8.count }
    }

    /// The aggregate of `elements`, in one pass. `reserveLimit`: how many
    /// extremes to keep for later changes (one is enough for a value now).
    init<Keys: Collection<String>>(_ op: CollectionOperator, elements: [JSONValue], elementPath: Keys,
                                   reserveLimit: Int = Self.reserveLimit) {
        self.op = op
        self.elementPath = Array(elementPath)
        self.reserveLimit = max(1, reserveLimit)
        count = elements.count
        guard op != .count else { return }
        if op == .min || op == .max {
            gatherExtremes(elements)
        } else {
            for element in elements { if let number = number(in: element) { addToSum(number) } }
        }
    }

    /// The aggregate of no array (empty or missing).
    init(_ op: CollectionOperator) {
        self.init(op, elements: [], elementPath: EmptyCollection())
    }

    /// The operator's value over the array.
    var value: JSONValue {
        switch op {
        case .count: return .number(JSONNumber(count))
        case .sum: return sumValue
        case .avg:
            guard numbers > 0, infinities == 0 else { return .null }
            return Self.json(sumAsDouble / Double(numbers))
        case .min, .max: return reserve.first.map { .number($0.number) } ?? .null
        }
    }

    /// Updates the aggregate for an array that lost `removed` and gained
    /// `added`, from those elements alone. False when that cannot be known:
    /// every kept extreme was removed and others remain (a pass must find
    /// them again; at most once per ``reserveLimit`` removals of an extreme).
    mutating func update(removing removed: [JSONValue], adding added: [JSONValue]) -> Bool {
        count += added.count - removed.count
        guard op != .count else { return true }
        // Added first: an element both removed and kept is then found among the kept.
        for element in added { if let number = number(in: element) { add(number) } }
        for element in removed { if let number = number(in: element) { remove(number) } }
        return !reserve.isEmpty || reserveIsWhole
    }

    // MARK: Numbers

    /// The number an element holds at the element path, if any.
    private func number(in element: JSONValue) -> JSONNumber? {
        guard case .number(let number)? = elementPath.isEmpty ? element : element.value(at: elementPath) else {
            return nil
        }
        return number
    }

    private mutating func add(_ number: JSONNumber) {
        if op == .min || op == .max { addExtreme(number) } else { addToSum(number) }
    }

    private mutating func remove(_ number: JSONNumber) {
        if op == .min || op == .max { removeExtreme(number) } else { addToSum(number, subtracting: true) }
    }

    // MARK: Sum

    private mutating func addToSum(_ number: JSONNumber, subtracting: Bool = false) {
        numbers += subtracting ? -1 : 1
        if let integer = number.intValue {
            integerSum += subtracting ? -Int128(integer) : Int128(integer)
            return
        }
        guard let value = number.doubleValue else { return }
        nonIntegers += subtracting ? -1 : 1
        if value.isFinite {
            otherSum.add(value, subtracting: subtracting)
        } else {
            infinities += subtracting ? -1 : 1
        }
    }

    /// The sum as the nearest double.
    private var sumAsDouble: Double {
        guard nonIntegers > 0 else { return Double(integerSum) }
        var total = otherSum
        total.add(integerSum)
        return total.value
    }

    /// An integer while every number is one and the sum fits in 64 bits, else a double.
    private var sumValue: JSONValue {
        if nonIntegers == 0, let sum = Int(exactly: integerSum) { return .number(JSONNumber(sum)) }
        guard infinities == 0 else { return .null }
        return Self.json(sumAsDouble)
    }

    /// A double as JSON; one that overflowed (no JSON number) as `null`.
    private static func json(_ value: Double) -> JSONValue {
        guard value.isFinite else { return .null }
        if value == value.rounded(), abs(value) < 1e15 { return .number(JSONNumber(Int(value))) }
        return .number(JSONNumber(validatedLiteral: "\(value)"))
    }

    // MARK: Extremes

    /// Whether `a` is a better extreme than `b`: less for `@min`, greater for
    /// `@max`; of equal numbers, the literal first in byte order.
    private func precedes(_ a: Extreme, _ b: Extreme) -> Bool {
        if a.value != b.value { return op == .min ? a.value < b.value : a.value > b.value }
        return a.number.literal.utf8.lexicographicallyPrecedes(b.number.literal.utf8)
    }

    /// Where `extreme` goes in ``reserve``: after every one that precedes it.
    private func insertionIndex(of extreme: Extreme) -> Int {
        reserve.partitionPoint { precedes($0, extreme) }
    }

    /// The pass that fills ``reserve``: candidates gather unsorted up to
    /// twice the limit and are then cut to the best, so that an array in the
    /// worst order costs n log(limit), not n × limit.
    private mutating func gatherExtremes(_ elements: [JSONValue]) {
        var worstKept: Extreme?
        for element in elements {
            guard let number = number(in: element), let value = number.doubleValue else { continue }
            numbers += 1
            let extreme = Extreme(value: value, number: number)
            if let worstKept, !precedes(extreme, worstKept) {
                reserveIsWhole = false
                continue
            }
            reserve.append(extreme)
            if reserve.count >= 2 * reserveLimit {
                reserve.sort(by: precedes)
                reserve.removeLast(reserve.count - reserveLimit)
                reserveIsWhole = false
                worstKept = reserve.last
            }
        }
        reserve.sort(by: precedes)
        if reserve.count > reserveLimit {
            reserve.removeLast(reserve.count - reserveLimit)
            reserveIsWhole = false
        }
    }

    private mutating func addExtreme(_ number: JSONNumber) {
        guard let value = number.doubleValue else { return }
        numbers += 1
        let extreme = Extreme(value: value, number: number)
        // Past the last kept one of an array not wholly kept: it stays outside.
        if !reserveIsWhole, let last = reserve.last, !precedes(extreme, last) { return }
        reserve.insert(extreme, at: insertionIndex(of: extreme))
        if reserve.count > reserveLimit {
            reserve.removeLast()
            reserveIsWhole = false
        }
    }

    private mutating func removeExtreme(_ number: JSONNumber) {
        guard let value = number.doubleValue else { return }
        numbers -= 1
        let extreme = Extreme(value: value, number: number)
        let index = insertionIndex(of: extreme)
        // Not kept: it was among those after the last kept one.
        if index < reserve.count, reserve[index].value == value, reserve[index].number.literal == number.literal {
            reserve.remove(at: index)
        }
        if numbers == 0 { reserveIsWhole = true }
    }
}

extension ExactSum {
    /// Adds a 128-bit integer exactly.
    mutating func add(_ value: Int128) {
        let magnitude = value.magnitude
        add(UInt64(truncatingIfNeeded: magnitude), times2ToThe: 0, negative: value < 0)
        add(UInt64(truncatingIfNeeded: magnitude >> 64), times2ToThe: 64, negative: value < 0)
    }
}
