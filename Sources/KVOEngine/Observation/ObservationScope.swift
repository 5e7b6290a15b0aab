/// What an observation watches: one named object, or every object whose name
/// starts with a prefix (the empty prefix: every object), including objects
/// made later.
public enum ObservationScope: Sendable, Hashable, Comparable, CustomStringConvertible {
    case object(String)
    /// Matched on the UTF-8 bytes of the names in NFC, as `list` orders them.
    case prefix(String)

    /// The object's name or the prefix.
    public var name: String {
        switch self {
        case .object(let name), .prefix(let name): name
        }
    }

    public var isPrefix: Bool {
        if case .prefix = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .object(let name): name
        case .prefix(let prefix): "prefix \(prefix)"
        }
    }

    /// Objects first, then prefixes; each by its name's NFC bytes (`list`'s
    /// order), so that two spellings of one scope, equal, are neither before the other.
    public static func < (lhs: ObservationScope, rhs: ObservationScope) -> Bool {
        if lhs.isPrefix != rhs.isPrefix { return !lhs.isPrefix }
        return CanonicalName.precedes(lhs.name, rhs.name)
    }
}
