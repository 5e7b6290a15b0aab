/// What the encoders write into: the engine's `GrowableBytes` on the hot paths, a
/// `[UInt8]` elsewhere. Its generic code (here and ``JSONWriter``'s) is `@inlinable`,
/// so that the engine's encoders are specialized for each sink as when they shared a module.
@usableFromInline
package protocol ByteSink {
    mutating func append(_ byte: UInt8)
    mutating func append(bytes: UnsafeRawBufferPointer)
    /// Appends `lead`, the first `count` bytes (at most 24) of three words,
    /// the first byte in the low byte of the first word (the engine's `RequestID`
    /// text), then `trail`: a reply's start around its id.
    mutating func append(_ lead: StaticString, words: (UInt64, UInt64, UInt64), count: Int, _ trail: StaticString)
}

extension Array: ByteSink where Element == UInt8 {
    @inlinable @inline(__always)
    package mutating func append(bytes: UnsafeRawBufferPointer) {
        append(contentsOf: bytes)
    }
}

extension ByteSink {
    @inlinable
    package mutating func append(_ lead: StaticString, words: (UInt64, UInt64, UInt64), count: Int, _ trail: StaticString) {
        append(literal: lead)
        withUnsafeBytes(of: (words.0.littleEndian, words.1.littleEndian, words.2.littleEndian)) { bytes in
            append(bytes: UnsafeRawBufferPointer(rebasing: bytes[..<count]))
        }
        append(literal: trail)
    }

    /// Appends a literal's UTF-8 bytes with one copy. `append(contentsOf: "…".utf8)`
    /// walks the string's UTF-8 view instead: on the event path that was a
    /// tenth of the cost of a change (docs/PERFORMANCE.md).
    @inlinable @inline(__always)
    package mutating func append(literal: StaticString) {
        append(bytes: UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends the UTF-8 bytes of `string` with one copy.
    @inlinable @inline(__always)
    package mutating func append(utf8 string: String) {
        var string = string
        string.withUTF8 { append(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Appends an integer's decimal digits without going through `String`.
    @inlinable
    package mutating func append<T: BinaryInteger>(decimal value: T) {
        if value < 0 {
            append(UInt8(ascii: "-"))
            append(decimal: UInt64(value.magnitude))
            return
        }
        var remaining = UInt64(value)
        if remaining < 10 {
            append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var position = 24
            repeat {
                position -= 1
                buffer[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining % 10)
                remaining /= 10
            } while remaining > 0
            append(bytes: UnsafeRawBufferPointer(rebasing: buffer[position...]))
        }
    }
}
