import KVOValues

/// The compact record of a change that travels with the object's new document
/// through a replicated store (etcd, docs/CLUSTER.md): enough for every kvod to
/// derive the same ``ChangeRecord`` from its own replica, and the same events.
/// Old and new values are not in it: each replica reads them from the document
/// before and after.
public struct ReplicatedChange: Sendable, Equatable {
    /// The op that made it (`set`, `delete`, …), for people reading etcd.
    public var op: String
    public var object: String
    /// Where it changes; empty for the whole document.
    public var path: [String]
    public var kind: ChangeKind
    /// The array positions touched, for the collection kinds.
    public var indexes: [Int]
    /// Who made it and why, and the lifetime a set gave its value: optional
    /// members of the stored record (``ChangeContext``).
    public var context = ChangeContext()

    public init(op: String, object: String, path: [String], kind: ChangeKind, indexes: [Int] = []) {
        self.op = op
        self.object = object
        self.path = path
        self.kind = kind
        self.indexes = indexes
    }

    /// The record as stored: `{"op":…,"path":[…],"kind":…,"indexes":[…]}`,
    /// `indexes` left out when empty (a setting's: every reader takes an
    /// absent one as empty, and the record travels in every `Txn` and watch
    /// event). The object is the key's, in NFC (``ClusterKeys``); `"object"`
    /// spells it as the change did where that is not NFC, so that events say
    /// the name as sent.
    public var json: JSONValue {
        var members: JSONObject = [
            "op": .string(op),
            "path": .array(path.map(JSONValue.string)),
            "kind": .string(kind.rawValue),
        ]
        if !indexes.isEmpty {
            members["indexes"] = .array(indexes.map { .number(JSONNumber(validatedLiteral: String($0))) })
        }
        if CanonicalName.nfcIfDenormal(object) != nil { members["object"] = .string(object) }
        context.write(to: &members)
        return .object(members)
    }

    /// Reads a stored record of `object` (the key's name); nil when it is not
    /// one. Its `"object"`, if it is a spelling of `object`, names the change.
    public init?(object: String, json: JSONValue) {
        guard case .string(let op)? = json.member("op"), case .array(let keys)? = json.member("path"),
              case .string(let kindName)? = json.member("kind"), let kind = ChangeKind(rawValue: kindName) else {
            return nil
        }
        var path: [String] = []
        for key in keys {
            guard case .string(let text) = key else { return nil }
            path.append(text)
        }
        var indexes: [Int] = []
        if case .array(let numbers)? = json.member("indexes") {
            for number in numbers {
                guard case .number(let value) = number, let index = Int(value.literal) else { return nil }
                indexes.append(index)
            }
        }
        var spelled = object
        if case .string(let name)? = json.member("object"), name == object { spelled = name }
        self.init(op: op, object: spelled, path: path, kind: kind, indexes: indexes)
        context = ChangeContext(json)
    }
}

/// A change computed against the local replica, for the replicated store to
/// decide: the record, and the object's whole document after it.
public struct ChangeProposal: Sendable {
    public internal(set) var change: ReplicatedChange
    /// The document after the change; nil: the object is deleted.
    public let document: JSONObject?
    /// Its modSeqs after the change, for the record (``ReplicatedModSeqs``).
    public internal(set) var modSeqs: ProposedModSeqs?
    /// What the store must do for values' lifetimes (ephemeral, ttl) beside the change.
    public internal(set) var lifetimes = ProposedLifetimes()
}

/// What became of a proposal.
public enum ProposalOutcome: Sendable {
    /// Committed, and applied to this engine at `seq` (its events sent).
    case applied(seq: UInt64)
    /// The object changed since the replica was read; the replica has
    /// applied the newer change since: compute again.
    case conflict
    /// The replicated store could not be reached or refused; nothing changed.
    case unavailable(String)
    /// Refused before it was sent, for a limit of the store (its request
    /// size, its operations per transaction); nothing changed.
    case refused(KVOEngineError)
    /// The store may have committed it and the replicator could not find
    /// out (its answer was lost, and so were the attempts to learn it): the
    /// client is told so, and nothing is proposed again in its name.
    case unknown(String)
}

/// Where change ops go when state lives elsewhere (etcd): the engine computes
/// a change against its replica and proposes it; the replicator commits it
/// and, once this kvod's own follow of the store delivered it, the engine has
/// applied it through ``Engine/applyReplicated(_:document:seq:)``.
/// Loop-confined, like the engine.
public protocol ChangeReplicator: AnyObject {
    /// Whether the replica may be behind the store (it cannot follow it now):
    /// reads say `"stale": true`.
    var isStale: Bool { get }
    /// What `info` tells of the store under `cluster` (docs/PROTOCOL.md).
    var info: JSONObject { get }
    /// Decides `proposal`; `outcome` runs once, on the loop (at once when the store cannot be reached).
    func propose(_ proposal: ChangeProposal, _ outcome: @escaping (ProposalOutcome) -> Void)
    /// Decides a whole `batch` at once (one transaction, one revision); `outcome` as for a single change.
    func propose(_ batch: BatchProposal, _ outcome: @escaping (ProposalOutcome) -> Void)
    /// The most objects one transaction of the store may change (over etcd
    /// its `--max-txn-ops` halved: a document and a record each): the engine
    /// groups pipelined changes within it (``Engine/proposeQueuedPipelines()``).
    var maxObjectsPerProposal: Int { get }
}

extension ChangeReplicator {
    /// etcd's default: 128 operations, 64 objects.
    public var maxObjectsPerProposal: Int { Engine.maxPipelinedChanges }
}
