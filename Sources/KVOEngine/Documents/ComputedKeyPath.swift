import KVOValues

/// A key path that ends in a collection operator (`orders.@sum.amount`),
/// split into the array's path, the operator and the element path; and the
/// rules for where such a path may appear: it may be read (`get`) and
/// observed, never written.
struct ComputedKeyPath {
    /// How many keys name the array (`orders`: 1).
    let baseCount: Int
    let op: CollectionOperator
    /// What selects the number in each element (`amount`); empty for `@count`
    /// and for arrays of numbers.
    let elementPath: [String]

    /// Nil when `components` hold no operator.
    init?<Keys: Collection<String>>(components: Keys) where Keys.Index == Int {
        guard let index = components.firstIndex(where: { CollectionOperator(key: $0) != nil }),
              let op = CollectionOperator(key: components[index]) else { return nil }
        baseCount = index - components.startIndex
        self.op = op
        elementPath = Array(components[(index + 1)...])
    }

    /// The value over `base`, the array's value (nil: missing).
    func evaluate(over base: JSONValue?) -> JSONValue {
        op.evaluate(over: base, elementPath: elementPath)
    }
}

extension ObservedPath {
    /// The operator and what surrounds it, when this path ends in one.
    var computed: ComputedKeyPath? { ComputedKeyPath(components: components) }

    /// The path of the array a computed path reads (itself when it is not computed).
    var readPath: [String] {
        guard let computed else { return components }
        return Array(components.prefix(computed.baseCount))
    }

    /// Why this path cannot be read or observed: a second operator, or keys after `@count`.
    var readRefusal: KVOEngineError? {
        // The usual path has no `@` key: no operator to look for.
        guard components.contains(where: { $0.utf8.first == UInt8(ascii: "@") }), let computed else { return nil }
        if let second = computed.elementPath.first(where: { CollectionOperator(key: $0) != nil }) {
            return .badRequest("keyPath \"\(self)\" has two collection operators (\(computed.op.rawValue), \(second)); "
                + "a key path may end in one")
        }
        if computed.op == .count, !computed.elementPath.isEmpty {
            return .badRequest("keyPath \"\(self)\": @count ends a key path")
        }
        return nil
    }

    /// Why this path cannot be written: it is computed.
    var writeRefusal: KVOEngineError? {
        guard let computed else { return nil }
        return .badRequest("keyPath \"\(self)\" is computed (\(computed.op.rawValue)) and cannot be written; "
            + "change the array it reads")
    }
}

extension ComputedKeyPath {
    /// Refuses a request that writes a computed key path, or reads or
    /// observes a malformed one, as its op's row says it uses its key paths
    /// (a batch's ops are checked as each is decoded).
    static func refusal(_ operation: Operation, _ spec: OpSpec) -> KVOEngineError? {
        let writes: Bool
        switch spec.keyPathUse {
        case .none: return nil
        case .read: writes = false
        case .write: writes = true
        }
        // One switch binding only the key paths: an accessor per part copied
        // an observe's whole payload for each.
        switch operation {
        case .set(_, let keyPath, _), .insert(_, let keyPath, _, _), .remove(_, let keyPath, _),
             .replace(_, let keyPath, _, _), .add(_, let keyPath, _), .get(_, let keyPath?), .delete(_, let keyPath?):
            return writes ? keyPath.writeRefusal : keyPath.readRefusal
        case .observe(_, let keyPaths, _, _, _, _, _, _, _):
            return writes ? nil : firstReadRefusal(keyPaths)
        case .get(_, nil), .delete(_, nil), .unobserve, .list, .batch, .unobserveAll, .ping, .info, .observations,
             .metrics, .ack, .backup:
            return nil
        }
    }

    /// The first of `keyPaths`' read refusals: a plain loop, where a lazy
    /// `compactMap` retained and released each path and its error.
    private static func firstReadRefusal(_ keyPaths: [ObservedPath]) -> KVOEngineError? {
        for keyPath in keyPaths {
            if let refusal = keyPath.readRefusal { return refusal }
        }
        return nil
    }
}
