import KVOClient
import KVOProtocol
import KVOValues

/// A change as the JSON line `kvoctl observe` prints: the shape of kvod's
/// own event (docs/PROTOCOL.md), members in the order of its examples, so
/// `jq` filters work on both. With `resume`, a last member `"resume"`: the
/// change's ``Change/resumePoint`` as `EPOCH:SEQ` (none on a prior event).
enum ChangeLine {
    static func json(_ change: Change, resume: Bool = false) -> String {
        var members: JSONObject = [:]
        func add(_ field: Field, _ value: JSONValue?) { if let value { members[field.rawValue] = value } }
        add(.event, .string(EventType.change.rawValue))
        add(.object, .string(change.object))
        add(.prefix, change.prefix.map(JSONValue.string))
        add(.keyPath, change.keyPath.map(JSONValue.string))
        add(.kind, .string(change.kind.rawValue))
        if change.isPrior { add(.prior, true) }
        if change.isInitial { add(.initial, true) }
        add(.new, change.new)
        add(.old, change.old)
        add(.indexes, change.indexes.map { .array($0.map { .number(JSONNumber($0)) }) })
        add(.changedKeyPath, change.changedKeyPath.map(JSONValue.string))
        add(.cause, change.cause.map { .string($0.rawValue) })
        add(.seq, .number(JSONNumber(validatedLiteral: String(change.seq))))
        add(.coalesced, change.coalesced.map { .number(JSONNumber($0)) })
        // kvoctl's own member, not the protocol's.
        if resume, let point = change.resumePoint { members["resume"] = .string(point.description) }
        return JSONValue.object(members).jsonString
    }
}
