/// kvod's sequential specification of one object whose key paths are
/// registers: `set` (with `ifModSeq` or `ifValue`: compare-and-set), `get` of
/// a key path (value and modSeq) or of the whole document, and `batch` of sets
/// of the object's key paths, all applied at one seq or none
/// (docs/PROTOCOL.md, "Atomic and ephemeral state"). A history is partitioned
/// by object: a batch touches one object only, so no batch spans partitions.
///
/// A write applied at seq S leaves its key path's modSeq S; one of unknown
/// outcome leaves it unknown, to be learnt from the next read or condition.
/// Seqs are etcd's revisions, the order kvod applied the changes in: so
/// writes answered with a seq take effect in the order of their seqs (those of
/// one `Txn` share one, in request order), and a read that says which seq it
/// reflects comes after the object's writes up to it and before those above it. This
/// asks more than linearizability alone (some order fits), namely the order
/// kvod says it applied, and it is what keeps the search small: few orders of
/// the writes are left to try.
public struct KeyPathRegisterModel: LinearizabilityModel, Sendable {
    public let initialState: ObjectRegisters
    public let pathNames: [String]
    /// What the values are called in reports (a value's number indexes this).
    public let valueNames: [String]

    public init(initial: ObjectRegisters, pathNames: [String], valueNames: [String]) {
        initialState = initial
        self.pathNames = pathNames
        self.valueNames = valueNames
    }

    /// Whether a condition holds: yes, no, or cannot tell (an unknown modSeq).
    private enum Truth { case holds, fails, unknown }

    private func truth(_ condition: RegisterCondition?, at path: Int, in state: ObjectRegisters) -> Truth {
        switch condition {
        case nil: return .holds
        case .value(let value): return state.values[path] == value ? .holds : .fails
        case .modSeq(let modSeq):
            if state.modSeqs[path] == ObjectRegisters.unknownModSeq { return .unknown }
            return state.modSeqs[path] == modSeq ? .holds : .fails
        }
    }

    public func step(_ state: ObjectRegisters, _ input: RegisterInput, _ output: RegisterOutput?) -> [ObjectRegisters] {
        switch (input, output) {
        case (.write(let writes), .applied(let seq)?):
            return applied(writes, state, seq: seq).map { [$0] } ?? []
        case (.write(let writes), .conditionFailed?):
            return canFail(writes[...], state) ? [state] : []
        case (.write, .notApplied?):
            return [state]
        case (.write(let writes), nil):
            // Maybe applied: the world where it was (if its conditions could hold), and the one where it was not.
            guard let after = applied(writes, state, seq: ObjectRegisters.unknownModSeq), after != state else { return [state] }
            return [after, state]
        case (.read(let path), .value(let value, let modSeq, let after)?):
            guard state.values[path] == value, after?.contains(state.lastSeq) ?? true else { return [] }
            guard let modSeq else { return [state] }
            if state.modSeqs[path] == ObjectRegisters.unknownModSeq {
                var learnt = state
                learnt.modSeqs[path] = modSeq
                return [learnt]
            }
            return state.modSeqs[path] == modSeq ? [state] : []
        case (.readAll, .values(let values, let after)?):
            return state.values == values && after?.contains(state.lastSeq) ?? true ? [state] : []
        case (.read, nil), (.readAll, nil):
            return [state]
        default:
            return []
        }
    }

    /// The state after `writes` applied at `seq`, each condition holding in
    /// turn; nil when one cannot hold, or `seq` is below the last write's.
    private func applied(_ writes: [RegisterWrite], _ state: ObjectRegisters, seq: Int) -> ObjectRegisters? {
        var after = state
        if seq != ObjectRegisters.unknownModSeq {
            guard seq >= state.lastSeq else { return nil }
            after.lastSeq = seq
        }
        for write in writes {
            if truth(write.condition, at: write.path, in: after) == .fails { return nil }
            after.values[write.path] = write.value
            after.modSeqs[write.path] = seq
        }
        return after
    }

    /// Whether some write's condition can fail, the ones before it holding.
    private func canFail(_ writes: ArraySlice<RegisterWrite>, _ state: ObjectRegisters) -> Bool {
        var after = state
        for write in writes {
            if truth(write.condition, at: write.path, in: after) != .holds { return true }
            after.values[write.path] = write.value
            after.modSeqs[write.path] = ObjectRegisters.unknownModSeq
        }
        return false
    }

    /// The last seq applied never goes down: a write applied at a seq below
    /// it, or a read at a seq below it, fits no state from here on.
    public func neverFits(_ state: ObjectRegisters, _ input: RegisterInput, _ output: RegisterOutput?) -> Bool {
        switch output {
        case .applied(let seq)?: seq < state.lastSeq
        case .value(_, _, let after?)?, .values(_, let after?)?: after.upperBound < state.lastSeq
        default: false
        }
    }

    /// Every accepted order applies the applied writes in the order of their
    /// seqs and nothing else changes the state: so each key path ends as the
    /// write at its highest seq left it. Unless two writes share that seq
    /// (one `Txn`: either order), one's outcome is unknown, or a modSeq is
    /// unknown (a read may learn it).
    public func endState(of operations: [HistoryOperation<RegisterInput, RegisterOutput>],
                         from state: ObjectRegisters) -> ObjectRegisters? {
        guard !state.modSeqs.contains(ObjectRegisters.unknownModSeq) else { return nil }
        var end = state
        // Each key path's write at the highest seq so far: its seq and operation, and whether another shares it.
        var last: [(seq: Int, operation: Int, tied: Bool)?] = Array(repeating: nil, count: state.values.count)
        for (index, operation) in operations.enumerated() {
            guard case .write(let writes) = operation.input else { continue }
            switch operation.output {
            case .applied(let seq)?:
                end.lastSeq = max(end.lastSeq, seq)
                for write in writes {
                    if let known = last[write.path], known.seq > seq || (known.seq == seq && known.operation != index) {
                        if known.seq == seq { last[write.path]!.tied = true }
                        continue
                    }
                    last[write.path] = (seq, index, false)
                    end.values[write.path] = write.value
                    end.modSeqs[write.path] = seq
                }
            case nil: return nil
            default: continue
            }
        }
        return last.contains { $0?.tied == true } ? nil : end
    }

    // MARK: Reports

    private func name(_ value: Int) -> String { valueNames.indices.contains(value) ? valueNames[value] : "#\(value)" }

    private func describe(_ write: RegisterWrite) -> String {
        let condition = switch write.condition {
        case nil: ""
        case .modSeq(let modSeq)?: " ifModSeq \(modSeq)"
        case .value(let value)?: " ifValue \(name(value))"
        }
        return "set \(pathNames[write.path])=\(name(write.value))\(condition)"
    }

    public func describe(_ input: RegisterInput, _ output: RegisterOutput?) -> String {
        let asked = switch input {
        case .write(let writes) where writes.count == 1: describe(writes[0])
        case .write(let writes): "batch [" + writes.map(describe).joined(separator: ", ") + "]"
        case .read(let path): "get \(pathNames[path])"
        case .readAll: "get (whole document)"
        }
        let answered = switch output {
        case nil: "unknown (no answer, or it may have been applied)"
        case .applied(let seq)?: "ok seq \(seq)"
        case .conditionFailed?: "precondition_failed"
        case .notApplied?: "unavailable, nothing changed"
        case .value(let value, let modSeq, let after)?:
            "\(name(value))" + (modSeq.map { " modSeq \($0)" } ?? "") + describe(after)
        case .values(let values, let after)?: describe(values) + describe(after)
        }
        return "\(asked) -> \(answered)"
    }

    /// ` at seq 40 (after a write at 38)`.
    private func describe(_ after: ClosedRange<Int>?) -> String {
        guard let after else { return "" }
        return " at seq \(after.upperBound) (after the write at \(after.lowerBound))"
    }

    private func describe(_ values: [Int]) -> String {
        "{" + zip(pathNames, values).map { "\($0)=\(name($1))" }.joined(separator: ", ") + "}"
    }

    public func describe(_ state: ObjectRegisters) -> String {
        "{" + pathNames.indices.map { path in
            let modSeq = state.modSeqs[path] == ObjectRegisters.unknownModSeq ? "?" : String(state.modSeqs[path])
            return "\(pathNames[path])=\(name(state.values[path]))@\(modSeq)"
        }.joined(separator: ", ") + "} after seq \(state.lastSeq)"
    }

    // MARK: What operations leave and observe (for the minimizer)

    private struct Token: Hashable {
        enum Kind { case value, modSeq, lastWrite }
        let kind: Kind
        let path: Int
        let number: Int
    }

    public func produces(_ input: RegisterInput, _ output: RegisterOutput?) -> [AnyHashable] {
        guard case .write(let writes) = input else { return [] }
        switch output {
        case .applied(let seq)?:
            return [AnyHashable(Token(kind: .lastWrite, path: 0, number: seq))] + writes.flatMap {
                [AnyHashable(Token(kind: .value, path: $0.path, number: $0.value)),
                 AnyHashable(Token(kind: .modSeq, path: $0.path, number: seq))]
            }
        default:
            // Also a write refused or of unknown outcome: a read of its value keeps it in a report.
            return writes.map { AnyHashable(Token(kind: .value, path: $0.path, number: $0.value)) }
        }
    }

    public func consumes(_ input: RegisterInput, _ output: RegisterOutput?) -> [AnyHashable] {
        /// A read placed after the write at the low end of its range needs that write.
        func lastWrite(_ after: ClosedRange<Int>?) -> [AnyHashable] {
            after.map { [AnyHashable(Token(kind: .lastWrite, path: 0, number: $0.lowerBound))] } ?? []
        }
        switch (input, output) {
        case (.read(let path), .value(let value, let modSeq, let after)?):
            return [AnyHashable(Token(kind: .value, path: path, number: value))]
                + (modSeq.map { [AnyHashable(Token(kind: .modSeq, path: path, number: $0))] } ?? []) + lastWrite(after)
        case (.readAll, .values(let values, let after)?):
            return values.enumerated().map { AnyHashable(Token(kind: .value, path: $0.offset, number: $0.element)) }
                + lastWrite(after)
        case (.write(let writes), .applied?):
            return writes.compactMap { write in
                switch write.condition {
                case .modSeq(let modSeq)?: AnyHashable(Token(kind: .modSeq, path: write.path, number: modSeq))
                case .value(let value)?: AnyHashable(Token(kind: .value, path: write.path, number: value))
                case nil: nil
                }
            }
        default:
            return []
        }
    }
}
