/// Which operations of a history are linearized so far: a bit per operation.
/// Part of the checker's cache key, so hashed and compared often; kept as
/// whole words.
struct LinearizedSet: Hashable {
    private(set) var words: [UInt64]

    init(count: Int) { words = Array(repeating: 0, count: (count + 63) / 64) }

    func contains(_ index: Int) -> Bool { words[index >> 6] & (1 << UInt64(index & 63)) != 0 }

    mutating func insert(_ index: Int) { words[index >> 6] |= 1 << UInt64(index & 63) }

    mutating func remove(_ index: Int) { words[index >> 6] &= ~(1 << UInt64(index & 63)) }

    func inserting(_ index: Int) -> LinearizedSet {
        var copy = self
        copy.insert(index)
        return copy
    }
}
