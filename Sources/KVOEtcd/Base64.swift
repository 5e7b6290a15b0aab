/// Standard base64 (RFC 4648, with padding): how etcd's JSON gateway spells
/// every key and value, which are bytes in etcd. Foundation-free, like the engine.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let decoding: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    static func encode(_ bytes: some Collection<UInt8>) -> String {
        var output = [UInt8]()
        encode(Array(bytes), into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends the base64 of `input` to `output`: a request's keys and values
    /// go straight into its body (EtcdTxn+Body.swift).
    static func encode(_ input: [UInt8], into output: inout [UInt8]) {
        output.reserveCapacity(output.count + (input.count + 2) / 3 * 4)
        var index = 0
        while index < input.count {
            let b0 = UInt32(input[index])
            let b1 = index + 1 < input.count ? UInt32(input[index + 1]) : 0
            let b2 = index + 2 < input.count ? UInt32(input[index + 2]) : 0
            let triple = b0 << 16 | b1 << 8 | b2
            output.append(alphabet[Int(triple >> 18 & 63)])
            output.append(alphabet[Int(triple >> 12 & 63)])
            output.append(index + 1 < input.count ? alphabet[Int(triple >> 6 & 63)] : UInt8(ascii: "="))
            output.append(index + 2 < input.count ? alphabet[Int(triple & 63)] : UInt8(ascii: "="))
            index += 3
        }
    }

    /// The bytes `text` spells, or nil if it is not base64.
    static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(UnsafeRawBufferPointer($0)) }
    }

    /// The bytes `encoded` spells, or nil if it is not base64: read straight
    /// from the watch message's bytes, with no `String` between (the watch
    /// decodes every key and value of every change).
    static func decode(_ encoded: UnsafeRawBufferPointer) -> [UInt8]? {
        let table = decoding
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: encoded.count / 4 * 3 + 3) { buffer, count in
            var accumulator: UInt32 = 0
            var bits = 0
            var padding = 0
            var written = 0
            for byte in encoded {
                if byte == UInt8(ascii: "=") { padding += 1; continue }
                let value = table[Int(byte)]
                if value == 0xFF || padding > 0 { valid = false; break }
                accumulator = accumulator << 6 | UInt32(value)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    buffer[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                    written += 1
                }
            }
            if padding > 2 { valid = false }
            count = written
        }
        return valid ? output : nil
    }
}
