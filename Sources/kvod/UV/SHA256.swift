import CH2O

/// SHA-256 by OpenSSL's libcrypto (which H2O links already), through the C shim.
enum SHA256 {
    /// The digest of `bytes` in lower-case hex, as `sha256sum` prints it.
    static func hex(of bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBytes { kvod_http_sha256($0.baseAddress, $0.count, &digest) }
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
