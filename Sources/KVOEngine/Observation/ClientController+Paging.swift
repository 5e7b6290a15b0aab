import HeapModule

/// The `observations` request's pages: a client's observations in the order
/// they were made, from a cursor, a bounded number at a time.
extension ClientController {
    /// Up to `limit` of this client's observations made after the one whose
    /// ``ObservationInfo/serial`` is `after` (nil: from the first), oldest
    /// first, and whether more follow.
    ///
    /// An observation that exists throughout a paging is listed exactly
    /// once, whatever is observed or unobserved in between (a new one comes
    /// after every older one). A client with many observations keeps them in
    /// a ``CreationOrder`` (8 to 16 bytes each), so that a page costs its
    /// length and a binary search; a client with fewer than
    /// ``creationOrderFrom`` keeps none, and a page costs one pass over its
    /// table (a few thousand references) instead.
    public func observations(after: UInt64?, limit: Int) -> (observations: [ObservationInfo], more: Bool) {
        precondition(limit > 0, "a page holds at least one observation")
        if let creationOrder { return creationOrder.page(after: after, limit: limit) }
        var oldest = Heap<PageEntry>()
        infos.forEach { info in
            let serial = info.serial
            if let after, serial <= after { return }
            if oldest.count > limit {
                guard serial < oldest.max!.serial else { return }
                oldest.replaceMax(with: PageEntry(serial: serial, info: info))
            } else {
                oldest.insert(PageEntry(serial: serial, info: info))
            }
        }
        let more = oldest.count > limit
        if more { _ = oldest.popMax() }
        return (oldest.unordered.sorted().map(\.info), more)
    }

    /// How many observations a client has when it starts keeping them in
    /// creation order, and how few when it stops (apart, so that a client
    /// around one of them does not build and drop the order again and again).
    static let creationOrderFrom = 4096
    static let creationOrderUntil = 1024

    /// Keeps `info`, just made, in the creation order (made when there are enough).
    func noteMade(_ info: ObservationInfo) {
        if creationOrder != nil {
            creationOrder!.append(info)
        } else if observationCount >= Self.creationOrderFrom {
            creationOrder = CreationOrder(infos.elements)
        }
    }

    /// Takes `ended`, just taken out of the client's table, out of the
    /// creation order (dropped when few are left).
    func noteEnded(_ ended: some Sequence<ObservationInfo>) {
        guard creationOrder != nil else { return }
        guard observationCount >= Self.creationOrderUntil else {
            creationOrder = nil
            return
        }
        for info in ended { creationOrder!.remove(info) }
    }

}

/// An observation in a page, ordered by its serial.
private struct PageEntry: Comparable {
    let serial: UInt64
    let info: ObservationInfo

    static func < (lhs: PageEntry, rhs: PageEntry) -> Bool { lhs.serial < rhs.serial }
    static func == (lhs: PageEntry, rhs: PageEntry) -> Bool { lhs.serial == rhs.serial }
}
