import KVOValues

/// A KVC collection operator, the one computed key in a key path:
/// `tags.@count`, `orders.@sum.amount`. What precedes it names an array;
/// what follows `@sum`, `@avg`, `@min` and `@max` selects the number in each
/// element (without it, the elements themselves are the numbers).
///
/// Its value is always defined: an empty or missing array (or a value that
/// is not an array) gives `@count` 0, `@sum` 0 and `null` for the others;
/// elements that are not numbers are skipped.
public enum CollectionOperator: String, Sendable, CaseIterable {
    case count = "@count"
    case sum = "@sum"
    case avg = "@avg"
    case min = "@min"
    case max = "@max"

    /// The operator a key names, if it names one; any other key, `@`-led or
    /// not, is an ordinary member name.
    @inline(__always)
    init?(key: String) {
        guard key.utf8.first == UInt8(ascii: "@") else { return nil }
        self.init(rawValue: key)
    }

    /// The value of this operator over `base` (the array), each element read at `elementPath`.
    func evaluate<Keys: Collection<String>>(over base: JSONValue?, elementPath: Keys) -> JSONValue {
        guard case .array(let elements)? = base else { return CollectionAggregate(self).value }
        if self == .count { return .number(JSONNumber(elements.count)) }
        // One extreme is enough for a value now.
        return CollectionAggregate(self, elements: elements, elementPath: elementPath, reserveLimit: 1).value
    }
}
