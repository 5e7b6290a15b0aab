/// A validated key path into a document: a list of non-empty keys, written
/// `address.city` on the wire. The empty path, ``wholeDocument``, stands for
/// the document itself: a request without `keyPath` (it is never parsed from
/// text: an empty `keyPath` is an error).
///
/// Keys select members of JSON objects only; they never index arrays. Not named
/// `KeyPath`, which the standard library already uses.
public struct ObservedPath: Sendable, Hashable, CustomStringConvertible, Comparable {
    /// The keys, outermost first.
    public let components: [String]

    /// The longest key path kvod accepts, in UTF-8 bytes.
    public static let maxUTF8Length = 4096

    /// Parses `a.b.c`; throws `bad_request` for an empty path, an empty key
    /// (`a..b`, `.a`, `a.`) or a path longer than ``maxUTF8Length``.
    public init(parsing text: String) throws(KVOEngineError) {
        guard !text.isEmpty else { throw .badRequest("keyPath must not be empty") }
        guard text.utf8.count <= Self.maxUTF8Length else {
            throw .badRequest("keyPath is longer than \(Self.maxUTF8Length) bytes")
        }
        // Most paths have one key: then the text is the component, no split needed.
        var text = text
        let dots = text.withUTF8 { utf8 in utf8.reduce(0) { $0 + ($1 == UInt8(ascii: ".") ? 1 : 0) } }
        if dots == 0 {
            components = [text]
            return
        }
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        var components: [String] = []
        components.reserveCapacity(parts.count)
        for part in parts {
            guard !part.isEmpty else { throw .badRequest("keyPath \"\(text)\" has an empty component") }
            components.append(String(Substring(part)))
        }
        self.components = components
    }

    /// A path from keys that are known to be valid (non-empty keys; no keys: the whole document).
    public init(components: [String]) {
        precondition(!components.contains(where: \.isEmpty), "invalid key path components")
        self.components = components
    }

    /// The document itself: what a request without `keyPath` names.
    public static let wholeDocument = ObservedPath(components: [])

    /// Whether this is ``wholeDocument``.
    public var isWholeDocument: Bool { components.isEmpty }

    public var description: String { components.joined(separator: ".") }

    public static func < (lhs: ObservedPath, rhs: ObservedPath) -> Bool {
        lhs.components.lexicographicallyPrecedes(rhs.components)
    }
}
