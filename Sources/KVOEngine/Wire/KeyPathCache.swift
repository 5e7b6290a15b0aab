/// The key paths recently named by `set` requests, parsed: a client that
/// keeps setting the same few paths (the usual client) gets each one's
/// ``ObservedPath`` without splitting the text and allocating its components
/// again. Parsing and allocating them was a twentieth of a `set`.
///
/// Direct-mapped and small: a miss costs one string comparison, then the
/// path is parsed as it would be without the cache and replaces the entry.
struct KeyPathCache {
    private static let size = 32
    /// Empty until the first path is kept: an unused cache costs nothing.
    private var entries: [(text: String, path: ObservedPath)?] = []

    /// The parsed form of `text`; throws what ``ObservedPath/init(parsing:)`` throws.
    mutating func path(for text: String) throws(KVOEngineError) -> ObservedPath {
        let slot = Self.slot(for: text)
        if !entries.isEmpty, let entry = entries[slot], entry.text == text { return entry.path }
        let path = try ObservedPath(parsing: text)
        if entries.isEmpty { entries = Array(repeating: nil, count: Self.size) }
        entries[slot] = (text, path)
        return path
    }

    /// A slot from the length and the last byte (paths often share a prefix).
    private static func slot(for text: String) -> Int {
        var text = text
        // withUTF8: the UTF-8 view's own `last` walked it generically (twice the lookup).
        return text.withUTF8 { utf8 in (utf8.count &+ Int(utf8.last ?? 0) &* 7) & (size - 1) }
    }
}
