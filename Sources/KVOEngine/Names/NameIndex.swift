/// The names of the objects that have a document, in ascending order of their
/// UTF-8 bytes: what `list` pages through and a prefix observation's
/// `initial` walks, without scanning the other objects.
///
/// A sorted array split into chunks of at most ``chunkCapacity`` names: a
/// name is found by two binary searches, and an insertion moves at most one
/// chunk's names (a single sorted array moved a million names per new object
/// at a million). swift-collections' B-tree `SortedSet` is still behind an
/// "unstable, not for production" trait, so this stays the size it needs.
struct NameIndex {
    static let chunkCapacity = 512
    private var chunks: [[String]] = []
    private(set) var count = 0

    /// Adds `name`; does nothing when it is there.
    mutating func insert(_ name: String) {
        guard !chunks.isEmpty else {
            chunks = [[name]]
            count = 1
            return
        }
        let chunk = min(chunkIndex(atOrAfter: name), chunks.count - 1)
        let position = Self.position(of: name, in: chunks[chunk])
        if position < chunks[chunk].count, NameOrder.compare(chunks[chunk][position], name) == 0 { return }
        chunks[chunk].insert(name, at: position)
        count += 1
        if chunks[chunk].count > Self.chunkCapacity {
            let upper = Array(chunks[chunk][(Self.chunkCapacity / 2)...])
            chunks[chunk].removeSubrange((Self.chunkCapacity / 2)...)
            chunks.insert(upper, at: chunk + 1)
        }
    }

    /// Removes `name` (the same bytes); does nothing when it is not there.
    mutating func remove(_ name: String) {
        let chunk = chunkIndex(atOrAfter: name)
        guard chunk < chunks.count else { return }
        let position = Self.position(of: name, in: chunks[chunk])
        guard position < chunks[chunk].count, NameOrder.compare(chunks[chunk][position], name) == 0 else { return }
        chunks[chunk].remove(at: position)
        count -= 1
        if chunks[chunk].isEmpty { chunks.remove(at: chunk) }
    }

    /// Replaces everything by `names` (any order).
    mutating func replaceAll(with names: some Sequence<String>) {
        let sorted = names.sorted(by: NameOrder.precedes)
        count = sorted.count
        chunks = stride(from: 0, to: sorted.count, by: Self.chunkCapacity / 2).map {
            Array(sorted[$0..<min($0 + Self.chunkCapacity / 2, sorted.count)])
        }
    }

    /// Calls `body` with each name that starts with `prefix` and comes after
    /// `after` (all of them when nil), in order, until it returns false.
    func forEach(prefix: String, after: String?, _ body: (String) -> Bool) {
        // Start at the first name past both `after` and the start of the prefix's range.
        let start: String
        if let after, NameOrder.precedes(prefix, after) { start = after } else { start = prefix }
        let skipStart = after.map { NameOrder.compare($0, start) == 0 } ?? false
        var chunk = chunkIndex(atOrAfter: start)
        guard chunk < chunks.count else { return }
        var position = Self.position(of: start, in: chunks[chunk])
        while chunk < chunks.count {
            let names = chunks[chunk]
            while position < names.count {
                let name = names[position]
                position += 1
                if skipStart, NameOrder.compare(name, start) == 0 { continue }
                guard NameOrder.hasPrefix(name, prefix) else { return }
                guard body(name) else { return }
            }
            chunk += 1
            position = 0
        }
    }

    /// The first chunk whose last name is not before `name` (`chunks.count` when none).
    private func chunkIndex(atOrAfter name: String) -> Int {
        var low = 0
        var high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if NameOrder.precedes(chunks[middle][chunks[middle].count - 1], name) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    /// The first position in `names` whose name is not before `name`.
    private static func position(of name: String, in names: [String]) -> Int {
        var low = 0
        var high = names.count
        while low < high {
            let middle = (low + high) / 2
            if NameOrder.precedes(names[middle], name) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
