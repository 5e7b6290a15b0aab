extension RandomAccessCollection where Index == Int {
    /// The first index whose element is not `isBefore` the one looked for
    /// (`endIndex` when none is): a binary search of elements ordered so that
    /// every one that `isBefore` comes first.
    @inline(__always)
    func partitionPoint(_ isBefore: (Element) -> Bool) -> Int {
        var low = startIndex, high = endIndex
        while low < high {
            let middle = (low + high) / 2
            if isBefore(self[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
