/// What the collection operators need to know of an array, gathered in one
/// pass and then kept up to date by a change's inserted and removed elements
/// instead of another pass (``adding(_:)``, ``removing(_:)``).
struct CollectionAggregate {
    /// The element key path after the operator (`amount` in `@sum.amount`).
    var elementPath: [String] = []
    var count = 0
    /// How many elements have a number at the element path.
    var numbers = 0
    /// Their sum while every one is an integer and it fits in 64 bits: then
    /// it is exact, and so is keeping it up to date.
    var integerSum: Int? = 0
    var doubleSum: Double = 0
    /// The least and greatest number, with their literal as written.
    var least: (value: Double, literal: JSONNumber)?
    var greatest: (value: Double, literal: JSONNumber)?

    init() {}

    init<Keys: Collection<String>>(elements: [JSONValue], elementPath: Keys) {
        self.elementPath = Array(elementPath)
        add(elements)
    }

    /// The value of `op` for this array.
    func value(of op: CollectionOperator) -> JSONValue {
        switch op {
        case .count: return .number(JSONNumber(count))
        case .sum: return sumValue
        case .avg:
            guard numbers > 0 else { return .null }
            return Self.json((integerSum.map(Double.init) ?? doubleSum) / Double(numbers))
        case .min: return least.map { .number($0.literal) } ?? .null
        case .max: return greatest.map { .number($0.literal) } ?? .null
        }
    }

    private var sumValue: JSONValue {
        if let integerSum { return .number(JSONNumber(integerSum)) }
        return Self.json(doubleSum)
    }

    /// A double as JSON; one that overflowed (no JSON number) as `null`.
    private static func json(_ value: Double) -> JSONValue {
        guard value.isFinite else { return .null }
        if value == value.rounded(), abs(value) < 1e15 { return .number(JSONNumber(Int(value))) }
        return .number(JSONNumber(validatedLiteral: "\(value)"))
    }

    /// The number an element holds at the element path, if any.
    private func number(in element: JSONValue) -> JSONNumber? {
        guard case .number(let number)? = elementPath.isEmpty ? element : element.value(at: elementPath) else {
            return nil
        }
        return number
    }

    mutating func add(_ elements: [JSONValue]) {
        count += elements.count
        for element in elements {
            guard let number = number(in: element), let value = number.doubleValue else { continue }
            numbers += 1
            doubleSum += value
            if let sum = integerSum, let integer = number.intValue {
                let (total, overflow) = sum.addingReportingOverflow(integer)
                integerSum = overflow ? nil : total
            } else {
                integerSum = nil
            }
            if least.map({ value < $0.value }) ?? true { least = (value, number) }
            if greatest.map({ value > $0.value }) ?? true { greatest = (value, number) }
        }
    }

    /// This aggregate after the array lost `removed` and gained `added`, or
    /// nil when that cannot be known for `op` without another pass: a removed
    /// number was the least or greatest (`@min`, `@max`), or the sum is not an
    /// exact integer (`@sum`, `@avg`: a double sum depends on the order).
    func updated(removing removed: [JSONValue], adding added: [JSONValue],
                 for op: CollectionOperator) -> CollectionAggregate? {
        var result = self
        result.count -= removed.count
        for element in removed {
            guard let number = number(in: element), let value = number.doubleValue else { continue }
            switch op {
            case .min, .max:
                if value == least?.value || value == greatest?.value { return nil }
            case .sum, .avg, .count:
                guard let sum = result.integerSum, let integer = number.intValue else { return nil }
                result.integerSum = sum - integer
            }
            result.numbers -= 1
        }
        result.add(added)
        if op == .sum || op == .avg, result.integerSum == nil { return nil }
        return result
    }
}
