/// Cuts a byte stream into its top-level JSON objects, as they complete: the
/// gateway streams a watch as one JSON object after another. Scans each byte
/// once, remembering where it stopped, so a message arriving in many pieces
/// costs its length, not its length times the pieces.
struct JSONObjectStream {
    private var buffer: [UInt8] = []
    /// Where the scan resumes in `buffer`.
    private var scanned = 0
    /// Where the object being scanned starts, if one has started.
    private var objectStart: Int?
    private var depth = 0
    private var inString = false
    private var escaped = false
    /// An object still incomplete past this many bytes is an error.
    let maxObjectBytes: Int

    init(maxObjectBytes: Int) {
        self.maxObjectBytes = maxObjectBytes
    }

    /// Adds bytes and returns the objects they complete, in order.
    mutating func append(_ bytes: [UInt8]) throws(EtcdError) -> [[UInt8]] {
        buffer.append(contentsOf: bytes)
        var objects: [[UInt8]] = []
        var consumed = 0
        while scanned < buffer.count {
            let byte = buffer[scanned]
            scanned += 1
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if depth == 0 { objectStart = scanned - 1 }
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0, let start = objectStart {
                    objects.append(Array(buffer[start..<scanned]))
                    objectStart = nil
                    consumed = scanned
                } else if depth < 0 {
                    throw .malformedResponse("the watch stream closed a bracket it never opened")
                }
            default: break
            }
        }
        // Whitespace between objects is dropped with them.
        if objectStart == nil { consumed = buffer.count }
        if consumed > 0 {
            buffer.removeFirst(consumed)
            scanned -= consumed
            if let start = objectStart { objectStart = start - consumed }
        }
        if buffer.count > maxObjectBytes { throw .responseTooLarge(limit: maxObjectBytes) }
        return objects
    }
}
