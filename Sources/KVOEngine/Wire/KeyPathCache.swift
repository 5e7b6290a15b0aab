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
    /// How many bytes of texts are kept before the dead ones are dropped.
    private static let textBytesKept = 8192
    /// Every slot's text, one after another: slot `i`'s is `counts[i]`
    /// bytes from `starts[i]` (0 bytes: an empty slot; no path is empty).
    /// Compared in place: an array per slot was copied on every hit (a
    /// retain and a release). Empty until the first path is kept: an unused
    /// cache costs nothing.
    private var textBytes: [UInt8] = []
    private var starts: [Int] = []
    private var counts: [Int] = []
    private var paths: [ObservedPath] = []

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
        if !counts.isEmpty, bytes.count > 0, counts[slot] == bytes.count {
            let start = starts[slot]
            if textBytes.withUnsafeBytes({ memcmp($0.baseAddress! + start, bytes.baseAddress!, bytes.count) == 0 }) {
                return paths[slot]
            }
        }
        let path = try ObservedPath(parsing: String(decoding: bytes, as: UTF8.self))
        // A set's path: checked here, once per path kept, not once per set.
        if let refusal = path.writeRefusal {
            if writing { throw refusal }
            return path
        }
        keep(bytes, path, in: slot)
        return path
    }

    private mutating func keep(_ bytes: UnsafeRawBufferPointer, _ path: ObservedPath, in slot: Int) {
        if counts.isEmpty {
            starts = Array(repeating: 0, count: Self.size)
            counts = starts
            paths = Array(repeating: .wholeDocument, count: Self.size)
        }
        counts[slot] = 0
        if textBytes.count + bytes.count > Self.textBytesKept {
            // Only the live texts move: memory stays within the slots' texts and the margin.
            var live: [UInt8] = []
            for index in 0..<Self.size where counts[index] > 0 {
                let start = starts[index]
                starts[index] = live.count
                live.append(contentsOf: textBytes[start..<(start + counts[index])])
            }
            textBytes = live
        }
        starts[slot] = textBytes.count
        counts[slot] = bytes.count
        textBytes.append(contentsOf: bytes)
        paths[slot] = path
    }
}
