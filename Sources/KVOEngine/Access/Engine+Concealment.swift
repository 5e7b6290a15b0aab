/// What a client that may write an object but not read it is told when a
/// change there fails: that it failed, not why. The reasons (`not_found`,
/// `not_an_object`, `not_an_array`, `index_out_of_range`,
/// `precondition_failed`) each tell something of the stored value (whether a
/// key exists, its kind, an array's length, a modSeq), so they reach such a
/// client as `forbidden`, with one fixed message and no details.
extension Engine {
    /// `error`, the failure of `operation` from `client`, as that client may
    /// be told it. For a batch, the failing op is the one the error's `index` names.
    func concealing(_ error: KVOEngineError, of operation: Operation,
                    for client: ClientController) -> KVOEngineError {
        guard configuration.accessPolicy != nil else { return error }
        if error.code == .limitExceeded, error.message.hasPrefix(ResourceAccount.memoryRefusalStart), !readsEverything(client) {
            // How much kvod holds, and how much a write adds over the value it replaces, tell sizes of values.
            return KVOEngineError(.limitExceeded, "\(ResourceAccount.memoryRefusalStart)\(configuration.maxMemory) bytes "
                + "(--max-memory), and this request would bring it over; delete something first")
        }
        guard Self.stateRevealingCodes.contains(error.code) else { return error }
        var failed = operation
        var index: Int?
        if case .batch(let operations) = operation {
            guard case .number(let number)? = error.details[.index], let position = number.intValue,
                  operations.indices.contains(position) else { return error }
            (failed, index) = (operations[position].operation, position)
        }
        guard let (object, _) = Self.target(of: failed), !mayRead(object, client) else { return error }
        let message = "\(Self.name(of: client)) may write \(object) but not read it: the change was not applied, "
            + "and why is not told"
        guard let index else { return KVOEngineError(.forbidden, message) }
        return KVOEngineError(.forbidden, "ops[\(index)]: " + message, details: KVOEngineError.batchIndex(index))
    }

    /// The codes whose error depends on what the store holds.
    private static let stateRevealingCodes: Set<KVOEngineError.Code> = [
        .notFound, .notAnObject, .notAnArray, .indexOutOfRange, .preconditionFailed,
    ]
}
