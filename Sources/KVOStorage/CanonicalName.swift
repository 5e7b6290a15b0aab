import Foundation

/// The one spelling under which an object name or key is stored.
///
/// The engine compares names as Swift strings, that is by canonical
/// equivalence: "é" as one scalar (NFC) and as "e" + U+0301 (NFD) name the
/// same object in memory. SQLite compares bytes, so each spelling used to get
/// a row of its own, and deleting through one spelling left the other's row
/// to come back at the next start. Every name is stored in NFC, the form
/// Swift's own comparison normalizes to.
enum CanonicalName {
    /// `name` in NFC. ASCII is already NFC and is returned as it is, without
    /// going through Foundation (most names are ASCII, and this runs for
    /// every row a commit writes).
    static func of(_ name: String) -> String {
        if name.utf8.allSatisfy({ $0 < 0x80 }) { return name }
        return name.precomposedStringWithCanonicalMapping
    }

    /// A key path, dotted, with each key in NFC (a dot is ASCII, so
    /// normalizing the whole text is the same as normalizing each key).
    static func of(path components: [String]) -> String {
        of(components.joined(separator: "."))
    }
}
