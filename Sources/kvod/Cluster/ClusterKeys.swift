import KVOEngine
import KVOEtcd

/// Where kvod's state lies in etcd, under `--etcd-prefix`: each object's
/// document at `<prefix>o/<name>`, and at `<prefix>c/<name>` the record of the
/// object's last change, put in the same `Txn` (docs/CLUSTER.md).
struct ClusterKeys {
    let prefix: String

    var objects: String { prefix + "o/" }
    var records: String { prefix + "c/" }

    func document(_ object: String) -> String { objects + object }
    func record(_ object: String) -> String { records + object }

    /// What a key holds: an object's document or its change record (nil: neither).
    enum Entry {
        case document(String)
        case record(String)
    }

    func entry(_ key: [UInt8]) -> Entry? {
        let text = String(decoding: key, as: UTF8.self)
        if text.hasPrefix(objects) { return .document(String(text.dropFirst(objects.utf8.count))) }
        if text.hasPrefix(records) { return .record(String(text.dropFirst(records.utf8.count))) }
        return nil
    }

    /// A stored document; nil when the bytes are not a JSON object.
    static func document(_ bytes: [UInt8]) -> JSONObject? {
        guard case .object(let members)? = try? JSONReader.parse(bytes) else { return nil }
        return members
    }
}
