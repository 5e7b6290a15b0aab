import CSHA256

/// A token's SHA-256 in lower-case hex: what `--http-tokens` holds of it.
enum TokenDigest {
    static func hex<Bytes: Collection<UInt8>>(of token: Bytes) -> String {
        let bytes = Array(token)
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 65) { hex in
            bytes.withUnsafeBytes { kvod_sha256_hex($0.baseAddress, $0.count, hex.baseAddress) }
            return String(cString: hex.baseAddress!)
        }
    }
}
