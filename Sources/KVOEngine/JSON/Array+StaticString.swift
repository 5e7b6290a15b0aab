extension Array where Element == UInt8 {
    /// Appends a literal's UTF-8 bytes with one copy. `append(contentsOf: "…".utf8)`
    /// walks the string's UTF-8 view instead: on the event path that was a
    /// tenth of the cost of a change (docs/PERFORMANCE.md).
    @inline(__always)
    mutating func append(literal: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends the UTF-8 bytes of `string` with one copy.
    @inline(__always)
    mutating func append(utf8 string: String) {
        var string = string
        string.withUTF8 { append(contentsOf: $0) }
    }
}
