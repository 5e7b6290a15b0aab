/// The members of acknowledgements (issue 15): `ack` in `observe`, the `ack`
/// op's `seq`, and `await`/`awaitTimeout` on a change.
extension Fields {
    /// `ack` in `observe`: a boolean.
    func acknowledgesFlag() throws(KVOEngineError) -> Bool {
        switch self[.ack] {
        case nil: return false
        case .bool(let flag)?: return flag
        default: throw .badRequest("field \"ack\" must be a boolean")
        }
    }

    /// The `ack` op's `seq`: a non-negative integer (the engine checks it
    /// against the current seq).
    func acknowledgedSeq() throws(KVOEngineError) -> UInt64 {
        guard let seq = self[.seq] else { throw .badRequest("missing field \"seq\"") }
        guard case .number(let number) = seq, let value = UInt64(number.literal) else {
            throw .badRequest("field \"seq\" must be a non-negative integer (the seq of the last event handled)")
        }
        return value
    }

    /// `await` and `awaitTimeout`, checked; nil when neither is there.
    func changeAwait() throws(KVOEngineError) -> ChangeAwait? {
        guard self[.awaiting] != nil || self[.awaitTimeout] != nil else { return nil }
        guard let awaiting = self[.awaiting] else { throw .badRequest("field \"awaitTimeout\" needs \"await\"") }
        guard case .string(let name) = awaiting, let condition = ChangeAwait.Condition(rawValue: name) else {
            throw .badRequest("field \"await\" must be \"written\" or \"acknowledged\"")
        }
        guard let awaitTimeout = self[.awaitTimeout] else { return ChangeAwait(condition) }
        let limit = ChangeAwait.maxTimeout
        guard case .number(let number) = awaitTimeout, let milliseconds = number.intValue, milliseconds >= 1,
              milliseconds <= Int(limit) else {
            throw .badRequest("field \"awaitTimeout\" must be an integer of milliseconds from 1 to \(limit) "
                + "(the await timeout limit)")
        }
        return ChangeAwait(condition, timeout: UInt32(milliseconds))
    }
}
