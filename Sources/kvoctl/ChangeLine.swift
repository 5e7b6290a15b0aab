import KVOClient
import KVOEngine

/// A change as the JSON line `kvoctl observe` prints: the shape of kvod's
/// own event (docs/PROTOCOL.md), members in the order of its examples, so
/// `jq` filters work on both. With `resume`, a last member `"resume"`: the
/// change's ``Change/resumePoint`` as `EPOCH:SEQ` (none on a prior event).
enum ChangeLine {
    static func json(_ change: Change, resume: Bool = false) -> String {
        var members: JSONObject = ["event": "change", "object": .string(change.object)]
        if let prefix = change.prefix { members["prefix"] = .string(prefix) }
        if let keyPath = change.keyPath { members["keyPath"] = .string(keyPath) }
        members["kind"] = .string(change.kind.rawValue)
        if change.isPrior { members["prior"] = true }
        if change.isInitial { members["initial"] = true }
        if let new = change.new { members["new"] = new }
        if let old = change.old { members["old"] = old }
        if let indexes = change.indexes { members["indexes"] = .array(indexes.map { .number(JSONNumber($0)) }) }
        if let changedKeyPath = change.changedKeyPath { members["changedKeyPath"] = .string(changedKeyPath) }
        if let cause = change.cause { members["cause"] = .string(cause.rawValue) }
        members["seq"] = .number(JSONNumber(validatedLiteral: String(change.seq)))
        if let coalesced = change.coalesced { members["coalesced"] = .number(JSONNumber(coalesced)) }
        if resume, let point = change.resumePoint { members["resume"] = .string(point.description) }
        return JSONValue.object(members).jsonString
    }
}
