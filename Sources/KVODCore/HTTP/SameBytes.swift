extension UnsafeRawBufferPointer {
    /// Whether `other` holds the same bytes, compared eight at a time: the
    /// frame caches compare every stream's lines with the ones they kept.
    func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        var index = 0
        while index + 8 <= count {
            if loadUnaligned(fromByteOffset: index, as: UInt64.self)
                != other.loadUnaligned(fromByteOffset: index, as: UInt64.self) { return false }
            index += 8
        }
        while index < count {
            if self[index] != other[index] { return false }
            index += 1
        }
        return true
    }
}
