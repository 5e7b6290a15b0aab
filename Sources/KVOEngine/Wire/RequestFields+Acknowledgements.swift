/// The members of acknowledgements (issue 15): the `ack` op's `seq`, and `await`/`awaitTimeout` on a change.
extension Fields {
    /// The `ack` op's `seq`: a non-negative integer (the engine checks it
    /// against the current seq).
    func acknowledgedSeq() throws(KVOEngineError) -> UInt64 {
        guard let seq = try unsigned(.seq, "the seq of the last event handled") else {
            throw .badRequest("missing field \"seq\"")
        }
        return seq
    }

    /// `await` and `awaitTimeout`, checked; nil when neither is there.
    func changeAwait() throws(KVOEngineError) -> ChangeAwait? {
        guard self[.awaiting] != nil || self[.awaitTimeout] != nil else { return nil }
        guard let awaiting = self[.awaiting] else { throw .badRequest("field \"awaitTimeout\" needs \"await\"") }
        guard case .string(let name) = awaiting, let condition = ChangeAwait.Condition(rawValue: name) else {
            throw .badRequest("field \"await\" must be \"written\" or \"acknowledged\"")
        }
        let timeout = try milliseconds(.awaitTimeout, upTo: ChangeAwait.maxTimeout, "await timeout")
        return ChangeAwait(condition: condition, timeout: timeout ?? ChangeAwait.defaultTimeout)
    }
}
