/// Request members, a bit per ``Field``: which an op takes, which it needs.
struct FieldSet: Sendable, Equatable, ExpressibleByArrayLiteral {
    var bits: UInt64

    init(bits: UInt64) {
        self.bits = bits
    }

    init(arrayLiteral fields: Field...) {
        bits = fields.reduce(0) { $0 | Self.bit($1) }
    }

    var isEmpty: Bool { bits == 0 }

    /// The members, in ``Field``'s order.
    var fields: [Field] { Field.allCases.filter(contains) }

    func contains(_ field: Field) -> Bool { bits & Self.bit(field) != 0 }

    static func + (lhs: FieldSet, rhs: FieldSet) -> FieldSet { FieldSet(bits: lhs.bits | rhs.bits) }

    @inline(__always)
    static func bit(_ field: Field) -> UInt64 { 1 << UInt64(field.rawValue) }

    /// The members an op refuses (`unknown field`) when it does not take them,
    /// in the order a request with several is told of the first. The rest
    /// (`object`, `keyPath`, `keyPaths`, `value`, `values`, `index`,
    /// `indexes`, `options`, `context`, `policy`) an op that does not take
    /// them ignores, as kvod always did; `epoch` goes with `since`.
    static let refusedWhereNotTaken: [Field] = [
        .prefix, .after, .limit, .ifModSeq, .ifValue, .ephemeral, .ttl, .distinct, .kinds, .throttle, .ack, .compact,
        .update, .seq, .by, .awaiting, .awaitTimeout, .ops, .offset, .since,
    ]

    /// ``refusedWhereNotTaken`` as a set.
    static let refusable = FieldSet(bits: refusedWhereNotTaken.reduce(0) { $0 | bit($1) })
}
