import KVOEngine
import KVOEtcd

/// The leased keys of values with a lifetime (docs/CLUSTER.md): one per
/// leased key path, `<prefix>e/<object>/<key>/…` attached to the lease of the
/// connection that owns an ephemeral value, `<prefix>t/<object>/<key>/…` to a
/// lease of the value's `ttl`. Names are escaped (`%` → `%25`, `/` → `%2F`) so
/// that the keys at or under a key path are that key and the range under
/// `key/`. Each holds a ``LeasedValue``: etcd cannot tell a lease's expiry
/// from a delete (its issue #5487), the key tells what its end means.
extension ClusterKeys {
    enum Family: String {
        /// Ends with its owner's connection: a deletion with `cause: disconnect`.
        case ephemeral = "e/"
        /// Ends at the value's deadline: `cause: ttl`.
        case ttl = "t/"

        var cause: ChangeCause { self == .ephemeral ? .disconnect : .ttl }
    }

    func leased(_ family: Family, _ object: String, _ path: [String]) -> String {
        ([prefix + family.rawValue + Self.escaped(object)] + path.map(Self.escaped)).joined(separator: "/")
    }

    /// Whether `key` is a leased key of either family.
    func isLeased(_ key: [UInt8]) -> Bool {
        let text = String(decoding: key, as: UTF8.self)
        return text.hasPrefix(prefix + Family.ephemeral.rawValue) || text.hasPrefix(prefix + Family.ttl.rawValue)
    }

    private static func escaped(_ name: String) -> String {
        name.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "/", with: "%2F")
    }
}

/// What a leased key holds: the value it leases and what its end means.
/// Read leniently (unknown members ignored), like the change records.
struct LeasedValue {
    var object: String
    var path: [String]
    var cause: ChangeCause
    /// Who set the value: the client's uid and the kvod's host, for people reading etcd.
    var uid: UInt32?
    var host: String

    var json: JSONValue {
        var members: JSONObject = [
            "object": .string(object), "path": .array(path.map(JSONValue.string)),
            "cause": .string(cause.rawValue), "host": .string(host),
        ]
        if let uid { members["uid"] = .number(JSONNumber(Int(uid))) }
        return .object(members)
    }

    init(object: String, path: [String], cause: ChangeCause, uid: UInt32?, host: String) {
        self.object = object
        self.path = path
        self.cause = cause
        self.uid = uid
        self.host = host
    }

    init?(_ bytes: [UInt8]) {
        guard case .object(let members)? = try? JSONReader.parse(bytes), case .string(let object)? = members["object"],
              case .array(let keys)? = members["path"], case .string(let name)? = members["cause"],
              let cause = ChangeCause(rawValue: name) else { return nil }
        var path: [String] = []
        for key in keys {
            guard case .string(let text) = key else { return nil }
            path.append(text)
        }
        var host = ""
        if case .string(let text)? = members["host"] { host = text }
        var uid: UInt32?
        if case .number(let number)? = members["uid"] { uid = UInt32(number.literal) }
        self.init(object: object, path: path, cause: cause, uid: uid, host: host)
    }
}

extension ReplicaSnapshot {
    /// Tells the engine which values are leased, as the leased keys say.
    func restoreLeases(in engine: Engine, keys: ClusterKeys) {
        for kv in leasedKeys {
            guard let leased = LeasedValue(kv.value) else { continue }
            engine.restoreReplicatedLease(object: leased.object, path: leased.path,
                                          ephemeral: leased.cause == .disconnect, at: UInt64(kv.modRevision))
        }
    }
}
