/// The names of the objects that have a document, in ascending order of the
/// UTF-8 bytes of their NFC form (a name in NFC, as every ASCII name is, by
/// its own bytes): what `list` pages through and a prefix observation's
/// `initial` walks, without scanning the other objects. In that order the
/// names under a prefix, in either spelling, are one run.
///
/// A sorted array split into chunks of at most ``chunkCapacity`` names: a
/// name is found by two binary searches, and an insertion moves at most one
/// chunk's names (a single sorted array moved a million names per new object
/// at a million). swift-collections' B-tree `SortedSet` is still behind an
/// "unstable, not for production" trait, so this stays the size it needs.
struct NameIndex {
    static let chunkCapacity = 512

    /// A name as the store keeps it, and its NFC bytes when they differ.
    private struct Name {
        let name: String
        let denormal: [UInt8]?

        init(_ name: String) {
            self.name = name
            denormal = CanonicalName.nfcIfDenormal(name)
        }

        @inline(__always)
        func withKey<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            if let denormal { return denormal.withUnsafeBufferPointer(body) }
            var name = name
            return name.withUTF8(body)
        }

        func compare(_ key: UnsafeBufferPointer<UInt8>) -> Int {
            withKey { NameOrder.compare($0, key) }
        }
    }

    private var chunks: [[Name]] = []
    private(set) var count = 0

    /// Adds `name`; does nothing when it is there (in any spelling).
    mutating func insert(_ name: String) {
        guard !chunks.isEmpty else {
            chunks = [[Name(name)]]
            count = 1
            return
        }
        let (chunk, position, found) = CanonicalName.withNFC(name) { key in
            let chunk = min(chunkIndex(atOrAfter: key), chunks.count - 1)
            let position = Self.position(of: key, in: chunks[chunk])
            return (chunk, position, position < chunks[chunk].count && chunks[chunk][position].compare(key) == 0)
        }
        if found { return }
        chunks[chunk].insert(Name(name), at: position)
        count += 1
        if chunks[chunk].count > Self.chunkCapacity {
            let upper = Array(chunks[chunk][(Self.chunkCapacity / 2)...])
            chunks[chunk].removeSubrange((Self.chunkCapacity / 2)...)
            chunks.insert(upper, at: chunk + 1)
        }
    }

    /// Removes `name` (in any spelling); does nothing when it is not there.
    mutating func remove(_ name: String) {
        let (chunk, position, found) = CanonicalName.withNFC(name) { key in
            let chunk = chunkIndex(atOrAfter: key)
            guard chunk < chunks.count else { return (chunk, 0, false) }
            let position = Self.position(of: key, in: chunks[chunk])
            return (chunk, position, position < chunks[chunk].count && chunks[chunk][position].compare(key) == 0)
        }
        guard found else { return }
        chunks[chunk].remove(at: position)
        count -= 1
        if chunks[chunk].isEmpty { chunks.remove(at: chunk) }
    }

    /// Replaces everything by `names` (any order, no two spellings of one name).
    mutating func replaceAll(with names: some Sequence<String>) {
        let sorted = names.map(Name.init).sorted { lhs, rhs in rhs.withKey { lhs.compare($0) < 0 } }
        count = sorted.count
        chunks = stride(from: 0, to: sorted.count, by: Self.chunkCapacity / 2).map {
            Array(sorted[$0..<min($0 + Self.chunkCapacity / 2, sorted.count)])
        }
    }

    /// Calls `body` with each name that starts with `prefix` and comes after
    /// `after` (all of them when nil), in order, until it returns false. The
    /// three are compared in NFC.
    func forEach(prefix: String, after: String?, _ body: (String) -> Bool) {
        CanonicalName.withNFC(prefix) { prefix in
            guard let after else { return forEach(prefix: prefix, from: prefix, skippingIt: false, body) }
            CanonicalName.withNFC(after) { after in
                // Start at the first name past both `after` and the start of the prefix's range.
                if NameOrder.compare(prefix, after) < 0 {
                    forEach(prefix: prefix, from: after, skippingIt: true, body)
                } else {
                    forEach(prefix: prefix, from: prefix, skippingIt: NameOrder.compare(prefix, after) == 0, body)
                }
            }
        }
    }

    private func forEach(prefix: UnsafeBufferPointer<UInt8>, from start: UnsafeBufferPointer<UInt8>,
                         skippingIt skipStart: Bool, _ body: (String) -> Bool) {
        var chunk = chunkIndex(atOrAfter: start)
        guard chunk < chunks.count else { return }
        var position = Self.position(of: start, in: chunks[chunk])
        while chunk < chunks.count {
            let names = chunks[chunk]
            while position < names.count {
                let name = names[position]
                position += 1
                if skipStart, name.compare(start) == 0 { continue }
                guard name.withKey({ NameOrder.hasPrefix($0, prefix) }) else { return }
                guard body(name.name) else { return }
            }
            chunk += 1
            position = 0
        }
    }

    /// The first chunk whose last name is not before `key` (`chunks.count` when none).
    private func chunkIndex(atOrAfter key: UnsafeBufferPointer<UInt8>) -> Int {
        chunks.partitionPoint { $0[$0.count - 1].compare(key) < 0 }
    }

    /// The first position in `names` whose name is not before `key`.
    private static func position(of key: UnsafeBufferPointer<UInt8>, in names: [Name]) -> Int {
        names.partitionPoint { $0.compare(key) < 0 }
    }
}
