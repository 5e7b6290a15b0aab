import KVOProtocol
import KVOValues

extension Operation {
    /// The op this operation is.
    public var op: Op {
        switch self {
        case .set: .set
        case .get: .get
        case .delete: .delete
        case .insert: .insert
        case .remove: .remove
        case .replace: .replace
        case .add: .add
        case .observe: .observe
        case .unobserve: .unobserve
        case .unobserveAll: .unobserveAll
        case .ping: .ping
        case .info: .info
        case .observations: .observations
        case .list: .list
        case .batch: .batch
        case .metrics: .metrics
        case .ack: .ack
        case .backup: .backup
        }
    }

    /// Its op's row.
    var spec: OpSpec { op.spec }

    /// What the checks its row asks for read: the one object it names (nil
    /// for a prefix or none), its key path (nil for none or the whole
    /// document), an observation's key paths and the elements it puts in an array.
    struct Operands {
        var object: String?
        var keyPath: ObservedPath?
        var keyPaths: [ObservedPath] = []
        var elements: [JSONValue] = []
    }

    var operands: Operands {
        switch self {
        case .set(let object, let keyPath, _):
            Operands(object: object, keyPath: keyPath.isWholeDocument ? nil : keyPath)
        case .get(let object, let keyPath), .delete(let object, let keyPath):
            Operands(object: object, keyPath: keyPath)
        case .insert(let object, let keyPath, _, let values), .replace(let object, let keyPath, _, let values):
            Operands(object: object, keyPath: keyPath, elements: values)
        case .remove(let object, let keyPath, _), .add(let object, let keyPath, _):
            Operands(object: object, keyPath: keyPath)
        case .observe(let scope, let keyPaths, _, _, _, _, _, _, _):
            Operands(object: scope.objectName, keyPaths: keyPaths)
        case .unobserve(let scope, let keyPaths):
            Operands(object: scope.objectName, keyPaths: keyPaths ?? [])
        case .list, .batch, .unobserveAll, .ping, .info, .observations, .metrics, .ack, .backup:
            Operands()
        }
    }
}

extension ObservationScope {
    /// The object's name; nil for a prefix.
    var objectName: String? {
        if case .object(let name) = self { return name }
        return nil
    }
}
