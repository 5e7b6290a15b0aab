// The string scanning of JSONReader: the ASCII fast path here, UTF-8 validation and
// escapes in JSONStringBody. Kept apart from the structural reader in JSONReader.swift.

extension JSONReader {
    /// Reads the string whose opening quote is at `position`.
    ///
    /// Printable ASCII without escapes, the bulk of kvod's traffic, is found
    /// eight bytes at a time and copied once; anything else takes the
    /// validating slow path.
    mutating func parseString(materialize: Bool) throws(JSONError) -> String {
        let start = position + 1
        if let run = plainASCIIString() { return materialize ? makeString(run) : "" }
        return try parseStringSlowly(from: start, materialize: materialize)
    }

    /// Reads the string whose opening quote is at `position`, as raw bytes
    /// when it is printable ASCII without escapes.
    mutating func parseStringText() throws(JSONError) -> JSONText {
        let start = position + 1
        if let run = plainASCIIString() { return .plain(UnsafeRawBufferPointer(rebasing: bytes[run])) }
        return .decoded(try parseStringSlowly(from: start, materialize: true))
    }

    /// Past the opening quote at `position`: the bytes of a printable ASCII
    /// string without escapes, with `position` after its closing quote; or
    /// nil, with `position` at the first byte the slow path must look at.
    private mutating func plainASCIIString() -> Range<Int>? {
        position += 1
        let start = position
        position = JSONStringScan.endOfPlainRun(in: bytes, from: start, asciiOnly: true)
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        position += 1
        lastStringWasPlainASCII = true
        return start..<position - 1
    }

    /// Checks the rest of the string (``JSONStringBody``); then a string without
    /// escapes is made from its bytes, and one with escapes is decoded straight into a `String`.
    private mutating func parseStringSlowly(from start: Int, materialize: Bool) throws(JSONError) -> String {
        lastStringWasPlainASCII = false
        let firstEscape = try JSONStringBody.validate(bytes, from: &position)
        guard materialize else { return "" }
        return JSONStringBody.string(bytes, start..<position - 1, firstEscape: firstEscape)
    }
}
