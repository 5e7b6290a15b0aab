import KVOValues

/// Where kvod's state lies in etcd, under `--etcd-prefix`: each object's
/// document at `<prefix>o/<name>`, and at `<prefix>c/<name>` the record of the
/// object's last change, put in the same `Txn` (docs/CLUSTER.md). A name is
/// in NFC in its keys (``CanonicalName``): its spellings are one object, so
/// they must be one key, or two documents of one object could stand side by
/// side (and a `Txn` comparing one key's revision would never pass). Pure, so
/// that the mapping from names to keys is tested without etcd; the daemon's
/// replica (`Sources/kvod/Cluster`) builds its requests with it.
public struct ClusterKeys: Sendable {
    public let prefix: String

    public init(prefix: String) {
        self.prefix = prefix
    }

    public var objects: String { prefix + "o/" }
    public var records: String { prefix + "c/" }

    public func document(_ object: String) -> String { objects + CanonicalName.nfc(object) }
    public func record(_ object: String) -> String { records + CanonicalName.nfc(object) }

    /// What a key holds: an object's document or its change record (nil: neither).
    public enum Entry: Equatable, Sendable {
        case document(String)
        case record(String)
    }

    public func entry(_ key: [UInt8]) -> Entry? {
        if let name = Self.rest(of: key, after: objects) { return .document(name) }
        if let name = Self.rest(of: key, after: records) { return .record(name) }
        return nil
    }

    /// What follows `start` in `key`, read byte for byte, not by Characters (a
    /// name that begins with a combining mark is one Character with the `/`
    /// before it); nil when `key` does not start with `start`.
    static func rest(of key: [UInt8], after start: String) -> String? {
        let count = start.utf8.count
        guard key.count >= count, key[..<count].elementsEqual(start.utf8) else { return nil }
        return String(decoding: key[count...], as: UTF8.self)
    }

    /// A document key's value as kvod puts it: the record of the change, a
    /// line feed, the document (each compact JSON, so the first line feed
    /// ends the record). One key per change, not a record key beside it:
    /// half the keys etcd writes and watches send (docs/CLUSTER.md).
    public static func storedValue(documentBytes: [UInt8], record: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(record.count + 1 + documentBytes.count)
        bytes += record
        bytes.append(UInt8(ascii: "\n"))
        bytes += documentBytes
        return bytes
    }

    /// A document key's value: the document, and the record inside it when
    /// kvod put it (``storedValue(documentBytes:record:)``); a plain JSON object
    /// (`etcdctl`, or an older kvod, which put the record beside it) has none.
    /// Nil when it is neither.
    public static func stored(_ bytes: [UInt8]) -> (document: JSONObject, record: JSONValue?)? {
        if let end = bytes.firstIndex(of: UInt8(ascii: "\n")),
           case .object(let record)? = try? JSONReader.parse(bytes[..<end]),
           case .object(let members)? = try? JSONReader.parse(bytes[(end + 1)...]) {
            return (members, .object(record))
        }
        guard case .object(let members)? = try? JSONReader.parse(bytes) else { return nil }
        return (members, nil)
    }
}

/// The leased keys of values with a lifetime (docs/CLUSTER.md): one per
/// leased key path, `<prefix>e/<object>/<key>/…` attached to the lease of the
/// connection that owns an ephemeral value, `<prefix>t/<object>/<key>/…` to a
/// lease of the value's `ttl`. Names are escaped (`%` → `%25`, `/` → `%2F`) so
/// that the keys at or under a key path are that key and the range under
/// `key/`. Each holds a `LeasedValue` (`Sources/kvod/Cluster/ClusterKeys+Lifetimes.swift`):
/// etcd cannot tell a lease's expiry from a delete (its issue #5487), the key
/// tells what its end means. Beside them, `<prefix>l/<object>/<key>/…`,
/// without lease, notes that the value is leased: a note whose leased keys are
/// gone when a kvod starts tells of a lease that ended while no kvod followed etcd.
extension ClusterKeys {
    public enum Family: String, CaseIterable, Sendable {
        /// Ends with its owner's connection: a deletion with `cause: disconnect`.
        case ephemeral = "e/"
        /// Ends at the value's deadline: `cause: ttl`.
        case ttl = "t/"
        /// The note, without lease, that the value is leased.
        case note = "l/"
    }

    public func leased(_ family: Family, _ object: String, _ path: [String]) -> String {
        ([prefix + family.rawValue + Self.escaped(CanonicalName.nfc(object))]
            + path.map { Self.escaped(CanonicalName.nfc($0)) }).joined(separator: "/")
    }

    /// The family of `key`, if it is a leased key or a note.
    public func family(of key: [UInt8]) -> Family? {
        Family.allCases.first { Self.rest(of: key, after: prefix + $0.rawValue) != nil }
    }

    /// Whether `key` is a leased key (a note is not).
    /// Byte by byte, without building strings: the watch asks it of every key.
    public func isLeased(_ key: [UInt8]) -> Bool {
        let count = prefix.utf8.count
        guard key.count > count + 1, key[count + 1] == UInt8(ascii: "/"),
              key[count] == UInt8(ascii: "e") || key[count] == UInt8(ascii: "t") else { return false }
        return key[..<count].elementsEqual(prefix.utf8)
    }

    /// `%` → `%25`, `/` → `%2F`, byte by byte (a `/` followed by a combining
    /// mark is one Character but still a `/`).
    private static func escaped(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "/") }) else { return name }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(name.utf8.count + 4)
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "%"): bytes += [UInt8(ascii: "%"), UInt8(ascii: "2"), UInt8(ascii: "5")]
            case UInt8(ascii: "/"): bytes += [UInt8(ascii: "%"), UInt8(ascii: "2"), UInt8(ascii: "F")]
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
