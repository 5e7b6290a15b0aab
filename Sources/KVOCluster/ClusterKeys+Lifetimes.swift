import KVOEngine
import KVOEtcd
import KVOValues

/// What a leased key holds: the value it leases and what its end means.
/// Read leniently (unknown members ignored), like the change records.
struct LeasedValue {
    var object: String
    var path: [String]
    var cause: ChangeCause
    /// Who set the value: the client's uid and the kvod's host, for people reading etcd.
    var uid: UInt32?
    var host: String
    /// With a ttl: when its lease ends (``ChangeContext/expires``), for a kvod that starts meanwhile.
    var expires: Double?

    var json: JSONValue {
        var members: JSONObject = [
            "object": .string(object), "path": .array(path.map(JSONValue.string)),
            "cause": .string(cause.rawValue), "host": .string(host),
        ]
        if let uid { members["uid"] = .number(JSONNumber(Int(uid))) }
        if let expires { members["expires"] = .number(JSONNumber(validatedLiteral: String(expires))) }
        return .object(members)
    }
}

// In an extension, so that the struct keeps its memberwise init.
extension LeasedValue {
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
        var expires: Double?
        if case .number(let number)? = members["expires"] { expires = number.doubleValue }
        self.init(object: object, path: path, cause: cause, uid: uid, host: host, expires: expires)
    }
}

extension ReplicaSnapshot {
    /// Tells the engine which values are leased, as the notes say; returns
    /// the notes whose leased keys are gone (their leases ended while no
    /// kvod followed etcd), with the revision of the set that leased them.
    func restoreLeases(in engine: Engine, keys: ClusterKeys) -> [(LeasedValue, grantedAt: UInt64)] {
        var leased: Set<[String]> = []
        var notes: [(LeasedValue, grantedAt: UInt64)] = []
        for kv in leasedKeys {
            guard let value = LeasedValue(kv.value) else { continue }
            if keys.family(of: kv.key) == .note {
                engine.restoreReplicatedLease(object: value.object, path: value.path,
                                              ephemeral: value.cause == .disconnect, at: UInt64(kv.modRevision),
                                              expires: value.expires)
                notes.append((value, UInt64(kv.modRevision)))
            } else {
                leased.insert([value.object] + value.path)
            }
        }
        return notes.filter { !leased.contains([$0.0.object] + $0.0.path) }
    }
}
