import KVOValues

/// The engine's side of ``DocumentDepth``: refusing, as a request is accepted, a change
/// that would nest an object deeper than ``DocumentDepth/limit``.
extension DocumentDepth {
    /// The `bad_request` for a `set` that would make `object` deeper than
    /// ``limit``, or nil: `value` lands at `keyPath`.
    static func refusal(_ object: String, _ keyPath: ObservedPath, _ value: JSONValue) -> KVOEngineError? {
        let budget = limit - keyPath.components.count
        // A request line nests at most RequestDecoder.maxDepth levels, so a
        // value read from one is at least a level shallower: a key path of
        // one key, the common case, needs no walk. Otherwise the walk stops
        // at the first branch too deep, and a scalar costs nothing.
        if budget >= RequestDecoder.maxDepth - 1 || value.nests(within: budget) { return nil }
        return tooDeep(object, keyPath, budget: budget)
    }

    /// The same for the elements of an op whose row asks for it (`insert`,
    /// `replace`): they land in the array at its key path, a level further
    /// down. An element given as `value` is only one level inside its request
    /// line, so it can nest a level deeper than the array that receives it
    /// allows at a key path of one key. A set's value and an add's key path
    /// are checked as the decoder takes them, a batch's ops as each is decoded.
    static func refusal(_ operation: Operation, _ spec: OpSpec) -> KVOEngineError? {
        guard spec.depth == .elements else { return nil }
        let operands = operation.operands
        guard let object = operands.object, let keyPath = operands.keyPath else { return nil }
        let budget = limit - keyPath.components.count - 1
        let elements = operands.elements
        if budget >= RequestDecoder.maxDepth - 1 || elements.allSatisfy({ $0.nests(within: budget) }) { return nil }
        return tooDeep(object, keyPath, budget: budget)
    }

    private static func tooDeep(_ object: String, _ keyPath: ObservedPath, budget: Int) -> KVOEngineError {
        let keys = keyPath.components.count
        let limitText = "deeper than \(limit) levels, the most an object may (docs/PROTOCOL.md, \"Nesting\")"
        guard budget >= 0 else {
            return .badRequest("\(object): a key path of \(keys) keys would make the object \(limitText)")
        }
        return .badRequest("""
            \(object): at a key path of \(keys) keys a value may nest at most \(budget) levels; this one would make \
            the object \(limitText)
            """)
    }
}

extension JSONValue {
    /// Whether this value nests at most `levels` levels (a scalar none, `[]`
    /// one). Stops at the first branch that goes deeper.
    func nests(within levels: Int) -> Bool {
        guard levels >= 0 else { return false }
        switch self {
        case .array(let elements):
            return levels >= 1 && elements.allSatisfy { $0.nests(within: levels - 1) }
        case .object(let members):
            return levels >= 1 && members.values.allSatisfy { $0.nests(within: levels - 1) }
        default:
            return true
        }
    }
}
