import KVOProtocol
import KVOValues

/// Conditional writes (`ifModSeq`, `ifValue`) and batches: what makes a
/// counter, a lock or a move between two objects correct with many writers.
extension Engine {
    /// Throws `precondition_failed` when `condition` does not hold for the
    /// value a change op would change (``WriteCondition/check(in:_:_:)``).
    func check(_ condition: WriteCondition, of operation: Operation) throws(KVOEngineError) {
        guard let (object, keyPath) = Self.target(of: operation) else { return }
        try condition.check(in: store, object, keyPath)
    }

    /// The object and key path a single change writes (nil key path: the
    /// whole document); nil for any other op (its row says whether it is one).
    static func target(of operation: Operation) -> (String, ObservedPath?)? {
        guard operation.spec.batchable else { return nil }
        let operands = operation.operands
        return operands.object.map { ($0, operands.keyPath) }
    }

    /// Applies `operations` as if one after another, or none of them: each
    /// is first tried, with its condition, on a scratch engine holding copies
    /// of the documents they touch; only when all succeed are they applied
    /// here, in order, each notifying as it would alone. Within one request,
    /// so their events are contiguous on every connection and they reach
    /// the change log in one loop iteration (one commit). Returns each op's
    /// seq, nil for an op that changed nothing, and each add's sum (nil for
    /// other ops). Under `--max-memory` the batch is measured as a whole:
    /// what it adds in all must fit.
    func batch(_ operations: [ChangeOperation],
               for client: ClientController) throws(KVOEngineError) -> (seqs: [UInt64?], sums: [Int?]) {
        _ = try trial(operations)
        resources.admitsEveryChange = true
        defer { resources.admitsEveryChange = false }
        var seqs: [UInt64?] = []
        seqs.reserveCapacity(operations.count)
        var sums: [Int?] = []
        for change in operations {
            let before = store.seq
            do throws(KVOEngineError) {
                try apply(change, for: client)
            } catch {
                // The trial applied the same ops to the same documents.
                preconditionFailure("a batch op failed after its trial succeeded: \(error)")
            }
            seqs.append(store.seq == before ? nil : store.seq)
            sums.append(addedSum(of: change.operation))
        }
        return (seqs, sums)
    }

    /// Tries `operations` in order, with their conditions, on a scratch
    /// engine holding copies of the documents they touch, told to `log`:
    /// this engine is left as it was. Returns the scratch engine and each
    /// op's seq there (nil: it changed nothing); throws the first op's error,
    /// with its `index`, or, under `--max-memory`, what the batch adds in all.
    func trial(_ operations: [ChangeOperation],
               log: ChangeLog? = nil) throws(KVOEngineError) -> (engine: Engine, seqs: [UInt64?]) {
        // The trial keeps this engine's limits; it neither checks access (done
        // for the whole batch before) nor keeps a history.
        var limits = configuration
        limits.accessPolicy = nil
        limits.historyCapacity = 0
        limits.maxMemory = 0
        let trial = Engine(configuration: limits)
        trial.store.seq = store.seq
        trial.changeLog = log
        var copied: Set<String> = []
        for change in operations {
            guard let (object, _) = Self.target(of: change.operation), copied.insert(object).inserted,
                  let members = store.document(object), let modSeqs = store.modSeqs(object) else { continue }
            trial.store.adopt(object, members: members, modSeqs: modSeqs)
        }
        let tryClient = trial.makeClient()
        var seqs: [UInt64?] = []
        seqs.reserveCapacity(operations.count)
        var moved = 0
        for (index, change) in operations.enumerated() {
            let before = trial.store.seq
            do throws(KVOEngineError) {
                moved += trial.arrayElementsMoved(by: change.operation)
                guard moved <= Self.maxBatchElementsMoved else {
                    throw KVOEngineError(.limitExceeded, """
                        this batch would move more than \(Self.maxBatchElementsMoved) array elements in all (an insert \
                        or remove moves every element after its index); remove or insert many indexes in one op instead
                        """, details: JSONObject([KVOProtocol.Field.limit: .number(JSONNumber(Self.maxBatchElementsMoved))]))
                }
                try trial.apply(change, for: tryClient)
            } catch {
                var details = error.details
                var message = error.message
                if error.code == .preconditionFailed, let (object, keyPath) = Self.target(of: change.operation) {
                    // The trial's modSeq of a value an earlier op wrote never
                    // existed: the client is told the one it can read.
                    let keys = keyPath?.components ?? []
                    let modSeq = store.value(object, at: keys) == nil ? 0 : store.modSeq(object, at: keys)
                    let held = JSONValue.number(JSONNumber(validatedLiteral: String(modSeq)))
                    if details[.modSeq] != held {
                        details[.modSeq] = held
                        let place = keyPath.map { "\(object) \($0)" } ?? object
                        message = "\(place) is changed by an earlier op of this batch (its modSeq is \(modSeq))"
                    }
                }
                details[.index] = .number(JSONNumber(index))
                throw KVOEngineError(error.code, "ops[\(index)]: \(message)", details: details)
            }
            seqs.append(trial.store.seq == before ? nil : trial.store.seq)
        }
        trial.closeClient(tryClient)
        // The trial's documents count only what its changes added (copies
        // are taken as they are): that is the batch's growth.
        try resources.checkMemory(growth: trial.store.sizeEstimate, of: "this batch")
        return (trial, seqs)
    }

    /// What a batch's `insert`s and `remove`s may move in all, each moving the
    /// elements after its index: a batch is applied twice (its trial, then
    /// here) in one loop turn, so many ops at low indexes of a long array
    /// would hold it for seconds (docs/RELIABILITY.md). One op with many
    /// indexes is one pass.
    static let maxBatchElementsMoved = 1 << 24

    /// The elements after where `operation` inserts or removes, in the array
    /// it changes: what it moves. 0 for any other op, and for an append.
    func arrayElementsMoved(by operation: Operation) -> Int {
        let object: String, keyPath: ObservedPath, first: Int
        if case .insert(let target, let path, let index?, _) = operation {
            (object, keyPath, first) = (target, path, index)
        } else if case .remove(let target, let path, let indexes) = operation, let index = indexes.first {
            (object, keyPath, first) = (target, path, index)
        } else {
            return 0
        }
        guard case .array(let elements)? = store.value(object, at: keyPath.components[...]) else { return 0 }
        return max(0, elements.count - first)
    }

    /// One change op with its condition, as a request of its own would run.
    private func apply(_ change: ChangeOperation, for client: ClientController) throws(KVOEngineError) {
        if let condition = change.condition { try check(condition, of: change.operation) }
        var ignored = ReplyEncoder()
        try perform(change.operation, lifetime: change.lifetime, for: client, reply: &ignored)
    }
}
