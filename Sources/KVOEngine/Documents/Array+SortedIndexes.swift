extension Array {
    /// Removes the elements at `indexes` (ascending, distinct, each inside the
    /// array) in one pass: each run of kept elements moves down once, as a
    /// block, whatever the number of indexes. One `remove(at:)` per index
    /// moved the whole tail each time; the standard library's
    /// `removeSubranges` is one pass too but swaps element by element, which
    /// a debug build does through generic calls (0.1 s for a million elements).
    mutating func removeElements(atSortedIndexes indexes: [Int]) {
        guard let first = indexes.first else { return }
        precondition(first >= 0 && indexes.last! < count, "index out of range")
        for position in indexes.indices.dropFirst() {
            precondition(indexes[position - 1] < indexes[position], "indexes must be ascending and distinct")
        }
        withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            // The removed elements wait aside and go to the vacated tail, where
            // removeLast destroys them: no slot is ever left uninitialized.
            let removed = UnsafeMutablePointer<Element>.allocate(capacity: indexes.count)
            defer { removed.deallocate() }
            var kept = first
            for (position, index) in indexes.enumerated() {
                (removed + position).moveInitialize(from: base + index, count: 1)
                let runEnd = position + 1 < indexes.count ? indexes[position + 1] : buffer.count
                (base + kept).moveInitialize(from: base + index + 1, count: runEnd - index - 1)
                kept += runEnd - index - 1
            }
            (base + kept).moveInitialize(from: removed, count: indexes.count)
        }
        removeLast(indexes.count)
    }
}
