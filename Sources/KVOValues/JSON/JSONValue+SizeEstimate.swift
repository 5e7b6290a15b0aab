extension JSONValue {
    /// About how many bytes the value takes as compact JSON: exact but for
    /// string escapes, and counting a separator after every element and
    /// member (one more than JSON has). So a container's estimate is 2 plus
    /// its parts', and kvod keeps a running total of its documents from the
    /// changes alone (``ChangeRecord/storeGrowth``), never walking a document again.
    public var sizeEstimate: Int {
        switch self {
        case .null: 4
        case .bool(let flag): flag ? 4 : 5
        case .number(let number): number.literal.utf8.count
        case .string(let string): string.utf8.count + 2
        case .array(let elements):
            elements.reduce(2) { $0 + $1.sizeEstimate + 1 }
        case .object(let members):
            members.keys.indices.reduce(2) { total, index in
                total + Self.memberOverhead(members.keys[index]) + members.values[index].sizeEstimate
            }
        }
    }

    /// What a member adds to its object's ``sizeEstimate`` besides its value:
    /// the quoted key, the colon and the separator.
    package static func memberOverhead(_ key: String) -> Int { key.utf8.count + 4 }
}
