#if canImport(Glibc)
import Glibc
#endif
import KVOProtocol

extension UnsafeRawBufferPointer {
    /// Whether `other` holds the same bytes: the frame cache compares every
    /// stream's write with the one it kept (libc's `memcmp`, many bytes a step).
    func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        guard count > 0, let base = baseAddress, let otherBase = other.baseAddress else { return true }
        return memcmp(base, otherBase, count) == 0
    }

    /// Whether these are the bytes of `field`'s wire name (a member name read as bytes).
    func isName(of field: Field) -> Bool {
        var name = field.rawValue
        return name.withUTF8 { hasSameBytes(as: UnsafeRawBufferPointer($0)) }
    }
}
