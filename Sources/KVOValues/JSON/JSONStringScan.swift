/// Finds, eight bytes at a time, where the plain run of a JSON string ends:
/// the first byte that is a quote, a backslash or a control character (and,
/// when asked, one that is not ASCII).
///
/// Reading a request and writing an event both walk every string byte by
/// byte otherwise; those walks were the largest single cost of a `set`
/// (eight instructions a byte). Word-at-a-time tests (the classic "has a
/// zero byte" trick) look at eight bytes in about as many instructions, and
/// the byte loop only runs over the last few bytes and the word that holds
/// the byte found.
///
/// `@inlinable`: the engine's request scanner and encoders inline it across the module boundary.
@usableFromInline
package enum JSONStringScan {
    @inlinable static var ones: UInt64 { 0x0101_0101_0101_0101 }
    @inlinable static var highs: UInt64 { 0x8080_8080_8080_8080 }

    /// The offset of the first byte at or after `start` that ends a plain
    /// run, or `bytes.count` when there is none.
    @inlinable @inline(__always)
    package static func endOfPlainRun(in bytes: UnsafeRawBufferPointer, from start: Int, asciiOnly: Bool) -> Int {
        var cursor = start
        let count = bytes.count
        if let base = bytes.baseAddress {
            while cursor + 8 <= count {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: cursor, as: UInt64.self))
                let found = specialBytes(word, asciiOnly: asciiOnly)
                // The lowest flag is the first special byte (little-endian: byte 0 is lowest).
                if found != 0 { return cursor + found.trailingZeroBitCount >> 3 }
                cursor += 8
            }
        }
        while cursor < count {
            let byte = bytes[cursor]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || (asciiOnly && byte >= 0x80) {
                return cursor
            }
            cursor += 1
        }
        return count
    }

    /// The high bit of each special byte of `word` set, and maybe of bytes
    /// above the lowest special one, never below it: a borrow only spreads
    /// upwards from a byte that is itself flagged. So the result is zero
    /// exactly when no byte is special, and its lowest bit marks the first.
    @inlinable @inline(__always)
    static func specialBytes(_ word: UInt64, asciiOnly: Bool) -> UInt64 {
        let quote = hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
        let backslash = hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
        // Bytes below 0x20: subtracting 0x20 borrows into the high bit only
        // for them, among bytes whose own high bit is clear (`& ~word`).
        let control = (word &- ones &* 0x20) & ~word & highs
        let nonASCII = asciiOnly ? word & highs : 0
        return quote | backslash | control | nonASCII
    }

    /// Non-zero exactly when some byte of `word` is zero.
    @inlinable @inline(__always)
    static func hasZeroByte(_ word: UInt64) -> UInt64 {
        (word &- ones) & ~word & highs
    }
}
