import Glibc
import KVOEngine

/// Writes changes into a `history_batches` row's blob in ``HistoryBatchCodec``'s
/// format. One encoder serves every row of a commit, and keeps its buffers'
/// capacity from one commit to the next.
struct HistoryBatchEncoder {
    /// The blob so far.
    private(set) var bytes: [UInt8] = []
    /// The change before.
    private var previous: ChangeRecord?

    /// How many bytes the blob holds.
    var count: Int { bytes.count }

    /// Starts a blob.
    mutating func begin() {
        bytes.removeAll(keepingCapacity: true)
        bytes.append(HistoryBatchCodec.format)
        previous = nil
    }

    /// Appends `change`.
    mutating func append(_ change: ChangeRecord) {
        typealias Codec = HistoryBatchCodec
        // Each read of an optional value from the record copies (retains) it: read once.
        let old = change.old, new = change.new
        let same = previous?.object == change.object
        var flags: UInt8 = same ? Codec.sameObject : 0
        // A run of sets to one key path: `old` is the previous change's `new`.
        var oldIsPreviousNew = false
        if let old {
            if same, let previous, previous.path == change.path, let previousNew = previous.new {
                oldIsPreviousNew = Self.isSameText(old, previousNew)
            }
            flags |= oldIsPreviousNew ? Codec.oldIsPreviousNew : Codec.hasOld
        }
        if new != nil { flags |= Codec.hasNew }
        if change.memberIndex != nil { flags |= Codec.hasMemberIndex }
        if change.cause != nil { flags |= Codec.hasCause }
        bytes.append(Codec.code(of: change.kind))
        bytes.append(flags)
        if !same { appendString(CanonicalName.of(change.object)) }
        appendVarint(UInt64(change.path.count))
        for key in change.path { appendString(CanonicalName.of(key)) }
        appendVarint(UInt64(change.indexes.count))
        for index in change.indexes { appendInt(index) }
        if let old, !oldIsPreviousNew { appendJSON(old) }
        if let new { appendJSON(new) }
        appendInt(change.existingKeys)
        if let memberIndex = change.memberIndex { appendInt(memberIndex) }
        if let cause = change.cause { appendString(cause.rawValue) }
        previous = change
    }

    /// Whether two scalars are written as the same JSON text (so that a
    /// value read back in place of the other is the same byte for byte).
    /// Arrays and objects are not compared: they are written out.
    private static func isSameText(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): return sameUTF8(x, y)
        case (.number(let x), .number(let y)): return sameUTF8(x.literal, y.literal)
        case (.bool(let x), .bool(let y)): return x == y
        case (.null, .null): return true
        default: return false
        }
    }

    /// Byte equality: `==` on strings is canonical equivalence, which NFC and NFD spellings pass.
    private static func sameUTF8(_ x: String, _ y: String) -> Bool {
        guard x.utf8.count == y.utf8.count else { return false }
        if x.utf8.isEmpty { return true }
        var x = x, y = y
        return x.withUTF8 { left in y.withUTF8 { right in memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0 } }
    }

    private mutating func appendVarint(_ number: UInt64) {
        var number = number
        while number >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: number) | 0x80)
            number >>= 7
        }
        bytes.append(UInt8(number))
    }

    private mutating func appendInt(_ number: Int) {
        let wide = Int64(number)
        appendVarint(UInt64(bitPattern: (wide << 1) ^ (wide >> 63)))
    }

    private mutating func appendString(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            appendVarint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// Its length (4 bytes, little-endian), then the value as JSON. A string
    /// with nothing to escape (most) is copied as it is.
    private mutating func appendJSON(_ json: JSONValue) {
        if case .string(var string) = json {
            let copied = string.withUTF8 { utf8 -> Bool in
                for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    return false
                }
                appendLength(utf8.count + 2)
                bytes.append(UInt8(ascii: "\""))
                bytes.append(contentsOf: utf8)
                bytes.append(UInt8(ascii: "\""))
                return true
            }
            if copied { return }
        }
        // Written once, in place: its length is patched in after it.
        let lengthAt = bytes.count
        appendLength(0)
        JSONWriter.write(json, into: &bytes)
        let length = bytes.count - lengthAt - 4
        for byte in 0..<4 { bytes[lengthAt + byte] = UInt8(truncatingIfNeeded: length >> (8 * byte)) }
    }

    private mutating func appendLength(_ length: Int) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: length >> shift)) }
    }
}
