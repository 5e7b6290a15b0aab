import KVOValues

/// One op of a `batch` as it travels through a replicated store (etcd,
/// docs/CLUSTER.md): the op's compact record, its position among the batch's
/// ops, and, when a later op of the same batch changes the same object, what
/// it wrote (the document put in the store shows only the last op's result).
/// Every kvod replays the steps in order against its replica, so each op has
/// its own events with the state right after it, as in local mode.
public struct ReplicatedBatchStep: Sendable, Equatable {
    /// The op's record, as a single change's.
    public var change: ReplicatedChange
    /// The op's index in the batch's `ops`.
    public var position: Int
    /// What the op wrote when the object's document after the batch cannot
    /// tell it: a setting's new value (nil: deleted), the values of an
    /// insertion or replacement. Ignored for the object's last step.
    public var written: JSONValue?

    /// The step as its object's record holds it: the change's record with `at` and `new`.
    var json: JSONValue {
        guard case .object(var members) = change.json else { return change.json }
        members["at"] = .number(JSONNumber(position))
        if let written { members["new"] = written }
        return .object(members)
    }

    /// The record of an object that `steps` (its own, in order) changed:
    /// `{"op":"batch","steps":[…]}`, put at the object's record key.
    public static func record(_ steps: [ReplicatedBatchStep]) -> JSONValue {
        .object(["op": "batch", "steps": .array(steps.map(\.json))])
    }

    /// The steps of a stored batch record of `object`; nil when the record is not a batch's.
    public static func steps(object: String, record json: JSONValue) -> [ReplicatedBatchStep]? {
        guard case .string("batch")? = json.member("op"), case .array(let entries)? = json.member("steps") else {
            return nil
        }
        // The batch's await token and proposal are the record's, not each step's: each step carries them here.
        let context = ChangeContext(json)
        var steps: [ReplicatedBatchStep] = []
        for entry in entries {
            guard var change = ReplicatedChange(object: object, json: entry),
                  case .number(let at)? = entry.member("at"), let position = Int(at.literal) else { return nil }
            change.context.awaitID = context.awaitID
            change.context.proposal = context.proposal
            steps.append(ReplicatedBatchStep(change: change, position: position, written: entry.member("new")))
        }
        return steps
    }
}

/// A `batch` computed against the local replica, for the replicated store to
/// decide as one transaction.
public struct BatchProposal: Sendable {
    /// One object the batch changes.
    public struct ObjectChange: Sendable {
        /// The object's name.
        public let object: String
        /// Its document after the batch; nil: deleted.
        public let document: JSONObject?
        /// Its ops' steps, in order (``ReplicatedBatchStep/record(_:)`` is what is stored).
        public internal(set) var steps: [ReplicatedBatchStep]
        /// Its modSeqs after the batch, for the record (``ReplicatedModSeqs``).
        public internal(set) var modSeqs: ProposedModSeqs?
    }

    /// Every object the batch's ops read or change, in order of first
    /// mention: what their conditions and results were computed from, so
    /// the transaction compares each one's revision.
    public let objects: [String]
    /// The objects it changes; empty when no op changes anything.
    public internal(set) var changes: [ObjectChange]
    /// Who sent it (the client's uid) and, with `await`, its token: the
    /// members of its records beside the steps (``ChangeContext``).
    public internal(set) var context = ChangeContext()
    /// The client (``ClientController/id``) that will own the ephemeral
    /// values its sets make (a step's `context.lifetime`); nil: none.
    public internal(set) var owner: Int?
}
