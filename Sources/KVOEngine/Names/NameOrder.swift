#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The order and the prefix test of object names for `list` and prefix
/// observations: by UTF-8 bytes, not by Swift's `String` comparison (which
/// orders by Unicode scalars after normalization), so that every client, in
/// any language, can reproduce it.
enum NameOrder {
    /// Whether `lhs`'s bytes come before `rhs`'s.
    static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// memcmp of the two names' bytes, then their lengths: <0, 0 or >0.
    static func compare(_ lhs: String, _ rhs: String) -> Int {
        var lhs = lhs
        var rhs = rhs
        return lhs.withUTF8 { l in
            rhs.withUTF8 { r in
                let common = min(l.count, r.count)
                if common > 0 {
                    let order = memcmp(l.baseAddress!, r.baseAddress!, common)
                    if order != 0 { return Int(order) }
                }
                return l.count - r.count
            }
        }
    }

    /// Whether `name`'s bytes start with `prefix`'s.
    static func hasPrefix(_ name: String, _ prefix: String) -> Bool {
        var name = name
        var prefix = prefix
        return name.withUTF8 { n in
            prefix.withUTF8 { p in
                p.count <= n.count && (p.count == 0 || memcmp(n.baseAddress!, p.baseAddress!, p.count) == 0)
            }
        }
    }
}
