/// A client's observations in the order they were made (by
/// ``ObservationInfo/serial``), so that a page of `observations` starts at
/// its cursor with a binary search instead of a pass over all of them.
///
/// Chunks of at most ``chunkCapacity`` references: a new observation goes at
/// the end, an ended one leaves its chunk (at most a chunk's length of
/// moves), and two neighbouring chunks that fit in one are merged, so the
/// chunks stay at least half full on average: about 8 to 16 bytes an
/// observation. The references are unretained: the client's table owns the
/// observations and takes each one out of here before it lets it go.
struct CreationOrder {
    static let chunkCapacity = 512
    private var chunks: [[Unmanaged<ObservationInfo>]] = []

    /// An order of `infos`, which may come in any order.
    init(_ infos: [ObservationInfo]) {
        let sorted = infos.sorted { $0.serial < $1.serial }
        var start = 0
        while start < sorted.count {
            let end = min(start + Self.chunkCapacity, sorted.count)
            chunks.append(sorted[start..<end].map { Unmanaged.passUnretained($0) })
            start = end
        }
    }

    /// Adds an observation newer than every one held.
    mutating func append(_ info: ObservationInfo) {
        precondition(chunks.last?.last.map { serial(of: $0) < info.serial } ?? true, "appended out of order")
        if chunks.isEmpty || chunks[chunks.count - 1].count == Self.chunkCapacity {
            // Its whole size at once: growing it by doubling left freed arrays behind.
            var chunk: [Unmanaged<ObservationInfo>] = []
            chunk.reserveCapacity(Self.chunkCapacity)
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(Unmanaged.passUnretained(info))
    }

    /// Takes out an observation that is held.
    mutating func remove(_ info: ObservationInfo) {
        let target = info.serial
        let (chunk, position) = target == 0 ? (0, 0) : firstPosition(after: target - 1)
        precondition(chunk < chunks.count && serial(of: chunks[chunk][position]) == target, "not in the order")
        chunks[chunk].remove(at: position)
        if chunks[chunk].isEmpty {
            chunks.remove(at: chunk)
            return
        }
        // Merged with a neighbour that fits: no run of small chunks.
        if chunk + 1 < chunks.count, chunks[chunk].count + chunks[chunk + 1].count <= Self.chunkCapacity {
            let next = chunks.remove(at: chunk + 1)
            chunks[chunk] += next
        } else if chunk > 0, chunks[chunk - 1].count + chunks[chunk].count <= Self.chunkCapacity {
            let taken = chunks.remove(at: chunk)
            chunks[chunk - 1] += taken
        }
    }

    /// Up to `limit` observations with a serial over `after` (nil: from the
    /// first), oldest first, and whether more follow.
    func page(after: UInt64?, limit: Int) -> (observations: [ObservationInfo], more: Bool) {
        var (chunk, position) = after.map { firstPosition(after: $0) } ?? (0, 0)
        var page: [ObservationInfo] = []
        while chunk < chunks.count {
            if position == chunks[chunk].count {
                (chunk, position) = (chunk + 1, 0)
                continue
            }
            guard page.count < limit else { return (page, true) }
            page.append(chunks[chunk][position].takeUnretainedValue())
            position += 1
        }
        return (page, false)
    }

    /// The chunk and position of the first observation whose serial is over
    /// `serial` (the end when none is).
    private func firstPosition(after serial: UInt64) -> (chunk: Int, position: Int) {
        // The last chunk whose first serial is not over `serial`, then within it.
        let low = chunks.partitionPoint { self.serial(of: $0[0]) <= serial }
        guard low > 0 else { return (0, 0) }
        let chunk = chunks[low - 1]
        let start = chunk.partitionPoint { self.serial(of: $0) <= serial }
        // Past the chunk's last: the next chunk's first.
        return start == chunk.count && low < chunks.count ? (low, 0) : (low - 1, start)
    }

    private func serial(of reference: Unmanaged<ObservationInfo>) -> UInt64 {
        reference._withUnsafeGuaranteedRef { $0.serial }
    }
}
