/// Standard base64 (RFC 4648, with padding), appended to a reply: how a
/// `backup` chunk's bytes travel in a JSON string.
enum Base64Text {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// How many characters `count` bytes take.
    static func length(of count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Appends the base64 text of `bytes` to `output`.
    static func append(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        let length = length(of: bytes.count)
        guard length > 0, let input = bytes.baseAddress else { return }
        // Pointers, not collections: generic indexing is slow in a debug build, which the tests run.
        let text = [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
            alphabet.withUnsafeBufferPointer { table in
                let symbols = table.baseAddress!, out = buffer.baseAddress!
                let whole = bytes.count / 3 * 3
                var index = 0, at = 0
                while index < whole {
                    let triple = UInt32(input.load(fromByteOffset: index, as: UInt8.self)) << 16
                        | UInt32(input.load(fromByteOffset: index + 1, as: UInt8.self)) << 8
                        | UInt32(input.load(fromByteOffset: index + 2, as: UInt8.self))
                    out[at] = symbols[Int(triple >> 18 & 63)]
                    out[at + 1] = symbols[Int(triple >> 12 & 63)]
                    out[at + 2] = symbols[Int(triple >> 6 & 63)]
                    out[at + 3] = symbols[Int(triple & 63)]
                    index += 3
                    at += 4
                }
                // The last one or two bytes, and `=` for each missing one.
                let left = bytes.count - whole
                if left > 0 {
                    let second = left == 2 ? UInt32(input.load(fromByteOffset: index + 1, as: UInt8.self)) << 8 : 0
                    let triple = UInt32(input.load(fromByteOffset: index, as: UInt8.self)) << 16 | second
                    out[at] = symbols[Int(triple >> 18 & 63)]
                    out[at + 1] = symbols[Int(triple >> 12 & 63)]
                    out[at + 2] = left == 2 ? symbols[Int(triple >> 6 & 63)] : UInt8(ascii: "=")
                    out[at + 3] = UInt8(ascii: "=")
                }
            }
            count = length
        }
        output.append(contentsOf: text)
    }
}
