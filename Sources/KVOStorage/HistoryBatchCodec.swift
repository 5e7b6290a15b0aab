import KVOEngine
import KVOValues

/// The encoding of a `history_batches` row's `changes`: consecutive changes
/// in one blob, so that a commit writes one row for a run of changes instead
/// of a row each (docs/DURABILITY.md, "On disk").
///
/// A format byte (3; 1 and 2 are still read), then per change: its kind (a
/// byte), a flags byte (which optional parts follow, whether the object is the
/// previous change's, whether `old` is the previous change's `new`, and
/// whether the change made its object), the
/// object name, the key path's keys, the indexes, `old` and `new` as JSON,
/// `existingKeys`, `memberIndex` and `cause`. Lengths and integers are LEB128
/// varints (integers zigzag-encoded), except a JSON value's length, 4 bytes
/// little-endian before the value. Names are in NFC (``CanonicalName``);
/// seqs are not stored: the row's `first_seq` numbers its changes.
///
/// Format 2 added the flag `oldIsPreviousNew`: a run of sets to one key
/// path stores each value once, not as one change's `new` and the next one's
/// `old` (fewer bytes and less of the writer's encoding, docs/PERFORMANCE.md).
/// Format 3 added the flag `createdObject` (``ChangeRecord/createdObject``),
/// without which a replay after a restart said `{}` for the document before
/// a change that made it, where the live event said null; a change of
/// format 1 or 2 reads as not having made its object, unless the history
/// shows it did (``StateDatabase/markingCreatedObjects(_:unflagged:)``).
enum HistoryBatchCodec {
    static let format: UInt8 = 3
    static let kinds: [ChangeKind] = [.setting, .insertion, .removal, .replacement]
    /// A kind's code: its place in ``kinds``.
    static func code(of kind: ChangeKind) -> UInt8 {
        switch kind {
        case .setting: 0
        case .insertion: 1
        case .removal: 2
        case .replacement: 3
        }
    }

    static let hasOld: UInt8 = 1, hasNew: UInt8 = 2, hasMemberIndex: UInt8 = 4, hasCause: UInt8 = 8,
               sameObject: UInt8 = 16, oldIsPreviousNew: UInt8 = 32, createdObject: UInt8 = 64

    /// Whether a blob's format has the flag `createdObject` (format 3 on).
    static func recordsCreatedObject(_ blob: [UInt8]) -> Bool {
        (blob.first ?? 0) >= 3
    }

    /// The changes of a blob, numbered from `firstSeq`; throws (with the
    /// reason) when the blob is not this format or is cut short, or a value
    /// is not JSON kvod can read.
    static func decode(_ blob: [UInt8], firstSeq: UInt64) throws(HistoryRowError) -> [ChangeRecord] {
        var reader = Reader(bytes: blob)
        guard (1...format).contains(try reader.byte()) else { throw HistoryRowError(reason: "an unknown history format") }
        var changes: [ChangeRecord] = []
        var object = ""
        var seq = firstSeq
        while !reader.isAtEnd {
            let kindCode = Int(try reader.byte())
            guard kindCode < kinds.count else { throw HistoryRowError(reason: "an unknown kind") }
            let flags = try reader.byte()
            if flags & sameObject == 0 {
                object = try reader.string()
            } else if changes.isEmpty {
                throw HistoryRowError(reason: "a change without its object")
            }
            var path: [String] = []
            for _ in 0..<(try reader.count()) { path.append(try reader.string()) }
            var indexes: [Int] = []
            for _ in 0..<(try reader.count()) { indexes.append(try reader.int()) }
            // Not `c ? nil : value`: JSONValue is ExpressibleByNilLiteral, so that nil would be JSON null.
            var old = flags & hasOld == 0 ? JSONValue?.none : .some(try reader.json())
            if flags & oldIsPreviousNew != 0 {
                guard flags & sameObject != 0, let previous = changes.last, previous.path == path,
                      let previousNew = previous.new else {
                    throw HistoryRowError(reason: "an old value without the change it repeats")
                }
                old = previousNew
            }
            let new = flags & hasNew == 0 ? JSONValue?.none : .some(try reader.json())
            let existingKeys = try reader.int()
            let memberIndex = flags & hasMemberIndex == 0 ? nil : try reader.int()
            let cause = flags & hasCause == 0 ? nil : ChangeCause(rawValue: try reader.string())
            changes.append(ChangeRecord(object: object, path: path, kind: kinds[kindCode], indexes: indexes,
                                        old: old, new: new, seq: seq, existingKeys: existingKeys,
                                        memberIndex: memberIndex, createdObject: flags & createdObject != 0,
                                        cause: cause))
            seq += 1
        }
        return changes
    }

    // MARK: Reading

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        mutating func byte() throws(HistoryRowError) -> UInt8 {
            guard offset < bytes.count else { throw Self.cutShort }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() throws(HistoryRowError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try byte()
                guard shift < 64 else { throw HistoryRowError(reason: "an integer too large") }
                value |= UInt64(byte & 0x7f) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }

        /// A count or length: no more than the bytes left (each item takes one at least).
        mutating func count() throws(HistoryRowError) -> Int {
            let value = try varint()
            guard value <= UInt64(bytes.count - offset) else { throw Self.cutShort }
            return Int(value)
        }

        mutating func int() throws(HistoryRowError) -> Int {
            let bits = try varint()
            let value = Int64(bitPattern: (bits >> 1) ^ (0 &- (bits & 1)))
            return Int(value)
        }

        mutating func string() throws(HistoryRowError) -> String {
            let length = try count()
            defer { offset += length }
            return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
        }

        mutating func json() throws(HistoryRowError) -> JSONValue {
            guard offset + 4 <= bytes.count else { throw Self.cutShort }
            let length = (0..<4).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
            offset += 4
            guard length <= bytes.count - offset else { throw Self.cutShort }
            defer { offset += length }
            do {
                return try JSONReader.parse(bytes[offset..<offset + length], maxDepth: DocumentDepth.readerLimit)
            } catch {
                throw HistoryRowError(reason: "a value that is not JSON kvod can read (\(error.message))")
            }
        }

        static let cutShort = HistoryRowError(reason: "a history batch cut short")
    }
}

/// Why one history row could not be read.
struct HistoryRowError: Error {
    let reason: String
}
