#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The order and the prefix test of object names for `list` and prefix
/// observations: by UTF-8 bytes, not by Swift's `String` comparison (which
/// orders by Unicode scalars after normalization), so that every client, in
/// any language, can reproduce it. Over bytes only: a name's bytes are its
/// NFC bytes (``CanonicalName``, through which every caller comes), never
/// the bytes as sent.
enum NameOrder {
    /// memcmp of the two byte strings, then their lengths: <0, 0 or >0.
    @inline(__always)
    static func compare(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(lhs.count, rhs.count)
        if common > 0 {
            let order = memcmp(lhs.baseAddress!, rhs.baseAddress!, common)
            if order != 0 { return Int(order) }
        }
        return lhs.count - rhs.count
    }

    /// Whether `name`'s bytes start with `prefix`'s.
    @inline(__always)
    static func hasPrefix(_ name: UnsafeBufferPointer<UInt8>, _ prefix: UnsafeBufferPointer<UInt8>) -> Bool {
        prefix.count <= name.count
            && (prefix.count == 0 || memcmp(name.baseAddress!, prefix.baseAddress!, prefix.count) == 0)
    }
}
