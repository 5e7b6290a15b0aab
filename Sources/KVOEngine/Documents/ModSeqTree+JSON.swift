import KVOValues

/// The modSeqs as JSON, for the data directory: a node is its seq when it was
/// replaced and not modified since and has no children (the usual case),
/// else `{"r":replacedAt,"m":modifiedAt,"c":{key: node, …}}`. Readers take
/// both forms.
extension ModSeqTree {
    public var json: JSONValue {
        if replacedAt == modifiedAt && children.isEmpty { return .number(JSONNumber(validatedLiteral: String(replacedAt))) }
        var members: JSONObject = ["r": .number(JSONNumber(validatedLiteral: String(replacedAt))),
                                   "m": .number(JSONNumber(validatedLiteral: String(modifiedAt)))]
        if !children.isEmpty { members["c"] = .object(JSONObject(uniqueKeysWithValues: children.map { ($0, $1.json) })) }
        return .object(members)
    }

    /// Reads ``json``'s form; nil for anything else.
    public init?(json: JSONValue) {
        switch json {
        case .number(let number):
            guard let seq = UInt64(number.literal) else { return nil }
            self.init(madeAt: seq)
        case .object(let members):
            guard case .number(let r)? = members["r"], let replaced = UInt64(r.literal),
                  case .number(let m)? = members["m"], let modified = UInt64(m.literal) else { return nil }
            var children: [String: ModSeqTree] = [:]
            if case .object(let nodes)? = members["c"] {
                for (key, node) in nodes {
                    guard let child = ModSeqTree(json: node) else { return nil }
                    children[key] = child
                }
            }
            self.init(replacedAt: replaced, modifiedAt: modified, children: children)
        default:
            return nil
        }
    }
}
