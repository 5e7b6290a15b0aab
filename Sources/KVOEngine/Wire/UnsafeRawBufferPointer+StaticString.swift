#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

extension UnsafeRawBufferPointer {
    /// Whether these bytes are exactly `literal`'s UTF-8.
    @inline(__always)
    func elementsEqual(_ literal: StaticString) -> Bool {
        guard count == literal.utf8CodeUnitCount else { return false }
        // memcmp: a byte loop here cost a hundred instructions per member name.
        return count == 0 || memcmp(baseAddress!, literal.utf8Start, count) == 0
    }
}
