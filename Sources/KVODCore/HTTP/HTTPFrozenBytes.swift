/// Bytes that neither move nor change while anyone holds them: a write's
/// frames, which every stream that got the same write hands to H2O as they
/// are, without a copy of its own (``HTTPFrameCache``).
public final class HTTPFrozenBytes {
    public let bytes: UnsafeRawBufferPointer

    init(_ source: ArraySlice<UInt8>) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: source.count, alignment: 1)
        buffer.copyBytes(from: source)
        bytes = UnsafeRawBufferPointer(buffer)
    }

    deinit { bytes.deallocate() }
}
