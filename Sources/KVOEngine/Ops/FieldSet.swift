/// Request members, a bit per ``RequestMember``: which an op takes, which it needs.
struct FieldSet: Sendable, Equatable, ExpressibleByArrayLiteral {
    var bits: UInt64

    init(bits: UInt64) {
        self.bits = bits
    }

    init(arrayLiteral members: RequestMember...) {
        bits = members.reduce(0) { $0 | Self.bit($1) }
    }

    var isEmpty: Bool { bits == 0 }

    /// The members, in ``RequestMember``'s order.
    var members: [RequestMember] { RequestMember.allCases.filter(contains) }

    func contains(_ member: RequestMember) -> Bool { bits & Self.bit(member) != 0 }

    static func + (lhs: FieldSet, rhs: FieldSet) -> FieldSet { FieldSet(bits: lhs.bits | rhs.bits) }

    @inline(__always)
    static func bit(_ member: RequestMember) -> UInt64 { 1 << UInt64(member.rawValue) }

    /// The members an op refuses (`unknown field`) when it does not take them,
    /// in the order a request with several is told of the first. The rest
    /// (`object`, `keyPath`, `keyPaths`, `value`, `values`, `index`,
    /// `indexes`, `options`, `context`, `policy`) an op that does not take
    /// them ignores, as kvod always did; `epoch` goes with `since`.
    static let refusedWhereNotTaken: [RequestMember] = [
        .prefix, .after, .limit, .ifModSeq, .ifValue, .ephemeral, .ttl, .distinct, .kinds, .throttle, .ack, .compact,
        .update, .seq, .by, .awaiting, .awaitTimeout, .ops, .offset, .since,
    ]

    /// ``refusedWhereNotTaken`` as a set.
    static let refusable = FieldSet(bits: refusedWhereNotTaken.reduce(0) { $0 | bit($1) })
}

/// An op's required members: up to four sets, one member of each needed.
/// Held inline, not in an array, so that a row copies as plain bytes. The
/// decoder's takers say which is missing; `OpTableTests` holds them to these.
struct RequiredMembers: Sendable, ExpressibleByArrayLiteral {
    private var groups: (FieldSet, FieldSet, FieldSet, FieldSet) = ([], [], [], [])

    init(arrayLiteral groups: FieldSet...) {
        precondition(groups.count <= 4, "at most four sets of required members")
        withUnsafeMutableBytes(of: &self.groups) { storage in
            for (position, group) in groups.enumerated() {
                storage.storeBytes(of: group.bits, toByteOffset: position * MemoryLayout<FieldSet>.stride, as: UInt64.self)
            }
        }
    }

    /// The sets, in the row's order.
    var all: [FieldSet] { [groups.0, groups.1, groups.2, groups.3].filter { !$0.isEmpty } }
}
