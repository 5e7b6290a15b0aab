import KVOTestSupport

/// Random small damage to a request line, for the differential tests that
/// hold two decoding paths to the same result: one to three bytes replaced,
/// inserted or removed, or the line cut, using bytes that matter to JSON.
struct LineMutator {
    private var random: SplitMix64
    private static let interesting = Array(#"{}[],:"\ .0123456789-eEtrufalsnk"#.utf8)
        + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xFF]

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    mutating func mutated(_ line: String) -> [UInt8] {
        var bytes = Array(line.utf8)
        for _ in 0...Int(random.next() % 3) {
            let index = Int(random.next() % UInt64(bytes.count + 1))
            let byte = Self.interesting[Int(random.next() % UInt64(Self.interesting.count))]
            switch random.next() % 4 {
            case 0 where index < bytes.count: bytes[index] = byte
            case 1: bytes.insert(byte, at: index)
            case 2 where index < bytes.count: bytes.remove(at: index)
            default: bytes.removeSubrange(index...)
            }
        }
        return bytes
    }
}
