#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The key paths recently named by `set` and `observe` requests, parsed: a
/// client that keeps setting or observing the same few paths gets each one's
/// ``ObservedPath`` without splitting the text and allocating its components
/// again (what that saves: docs/PERFORMANCE.md).
///
/// Direct-mapped and small: a miss costs one string comparison, then the
/// path is parsed as it would be without the cache and replaces the entry.
struct KeyPathCache {
    private static let size = 32
    /// Empty until the first path is kept: an unused cache costs nothing.
    private var entries: [(bytes: [UInt8], path: ObservedPath)?] = []

    /// The parsed form of `text`; throws what ``ObservedPath/init(parsing:)`` throws.
    mutating func path(for text: String) throws(KVOEngineError) -> ObservedPath {
        var text = text
        let found = text.withUTF8 { utf8 in
            Result { () throws(KVOEngineError) in try path(forBytes: UnsafeRawBufferPointer(utf8)) }
        }
        return try found.get()
    }

    /// The parsed form of the key path written as `bytes` (UTF-8); a hit
    /// makes no `String` at all. Only paths that may be written are kept:
    /// a computed one is refused when `writing`, else returned unkept (a
    /// later set of it must still be refused).
    mutating func path(forBytes bytes: UnsafeRawBufferPointer,
                       writing: Bool = true) throws(KVOEngineError) -> ObservedPath {
        let slot = (bytes.count &+ Int(bytes.last ?? 0) &* 7) & (Self.size - 1)
        if !entries.isEmpty, let entry = entries[slot], entry.bytes.count == bytes.count,
           entry.bytes.withUnsafeBytes({ bytes.count == 0 || memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) {
            return entry.path
        }
        let path = try ObservedPath(parsing: String(decoding: bytes, as: UTF8.self))
        // A set's path: checked here, once per path kept, not once per set.
        if let refusal = path.writeRefusal {
            if writing { throw refusal }
            return path
        }
        if entries.isEmpty { entries = Array(repeating: nil, count: Self.size) }
        entries[slot] = (Array(bytes), path)
        return path
    }
}
