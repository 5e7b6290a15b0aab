/// The one rule for names: object names, prefixes and key paths compared by
/// canonical equivalence, as Swift's `String` compares and hashes them (and so
/// ``ObjectTable`` and every dictionary keyed by a name): through the UTF-8
/// bytes of their NFC form. `é` as one scalar and as `e` + U+0301 are one
/// name, and a prefix covers a name when the name's NFC bytes start with the
/// prefix's, whichever way either is spelled (so `x` covers `x` + U+0301,
/// which has no composed form, as it covers `xy`, and `e` does not cover `é`
/// in either spelling). Every prefix test, order and stored or replicated key
/// of a name in kvod goes through here: access grants, prefix observations,
/// `list`, leases, the data directory's rows and the etcd keys.
///
/// An ASCII name is its own NFC form: it is read where it lies, with no
/// allocation. Other names are normalized into a new array.
public enum CanonicalName {
    /// Calls `body` with the UTF-8 bytes of `name` in NFC.
    @inline(__always)
    static func withNFC<R>(_ name: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        var name = name
        if name.withUTF8(isASCII) { return try name.withUTF8(body) }
        return try name._nfcCodeUnits.withUnsafeBufferPointer(body)
    }

    /// `name`'s NFC bytes when they differ from its own (it is not in NFC); nil when it is.
    static func nfcIfDenormal(_ name: String) -> [UInt8]? {
        var name = name
        if name.withUTF8(isASCII) { return nil }
        let nfc = name._nfcCodeUnits
        return name.utf8.elementsEqual(nfc) ? nil : nfc
    }

    /// `name` in NFC: the one spelling under which a name is stored or keyed
    /// outside the engine (the data directory's rows, the etcd keys). `name`
    /// itself when it is in NFC already, as every ASCII name is.
    public static func nfc(_ name: String) -> String {
        guard let nfc = nfcIfDenormal(name) else { return name }
        return String(decoding: nfc, as: UTF8.self)
    }

    /// A key path, dotted, with each key in NFC. A dot is a starter that
    /// composes with nothing, so normalizing the whole text is normalizing
    /// each key.
    public static func nfc(path components: [String]) -> String {
        nfc(components.joined(separator: "."))
    }

    /// Whether `name` starts with `prefix`, both in NFC.
    public static func hasPrefix(_ name: String, _ prefix: String) -> Bool {
        if prefix.isEmpty { return true }
        return withNFC(name) { name in withNFC(prefix) { prefix in NameOrder.hasPrefix(name, prefix) } }
    }

    /// Whether `lhs` comes before `rhs` by their NFC bytes (`list`'s order).
    public static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        withNFC(lhs) { lhs in withNFC(rhs) { rhs in NameOrder.compare(lhs, rhs) < 0 } }
    }

    /// Whether the key path `keyPath` is `path` or under it (components
    /// joined by `.`; the empty path is the whole document). A dot is never
    /// part of a composition, so the NFC of a key path is its keys' NFC joined.
    static func keyPath(_ keyPath: String, isAtOrUnder path: String) -> Bool {
        if path.isEmpty { return true }
        return withNFC(keyPath) { keyPath in
            withNFC(path) { path in
                NameOrder.hasPrefix(keyPath, path)
                    && (keyPath.count == path.count || keyPath[path.count] == UInt8(ascii: "."))
            }
        }
    }

    @inline(__always)
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // Eight bytes at a time, then the rest.
        var index = 0
        if bytes.count >= 8, let base = UnsafeRawPointer(bytes.baseAddress) {
            while index + 8 <= bytes.count {
                let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if word & 0x8080_8080_8080_8080 != 0 { return false }
                index += 8
            }
        }
        while index < bytes.count {
            if bytes[index] >= 0x80 { return false }
            index += 1
        }
        return true
    }
}
