import Dispatch
import Foundation

/// A finished snapshot of `kvod.db` for `backup`: a consistent copy, open
/// for reading and already unlinked from the data directory, so that it
/// takes no name there and its space comes back when the last reader lets
/// it go, whatever becomes of kvod. Read in chunks with `pread`, from any
/// offset (several clients may share one snapshot). Closed off the calling
/// thread: the last close of an unlinked file frees its pages, which for a large
/// file just written takes longer than the event loop may wait (docs/ARCHITECTURE.md).
public final class DatabaseSnapshot: Sendable {
    /// The seq whose changes, and none after it, the copy holds.
    public let seq: UInt64
    /// Its length in bytes.
    public let size: UInt64
    /// How the copy's steps went: the longest is the longest a commit waited for it.
    public let steps: SnapshotSteps
    private let descriptor: Int32

    init(descriptor: Int32, size: UInt64, seq: UInt64, steps: SnapshotSteps) {
        self.descriptor = descriptor
        self.size = size
        self.seq = seq
        self.steps = steps
    }

    deinit {
        DispatchQueue.global(qos: .utility).async { [descriptor] in _ = close(descriptor) }
    }

    /// Up to `count` bytes from `offset`: fewer only at the end, none past it.
    public func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
        let wanted = Int(min(UInt64(count), size - min(offset, size)))
        var bytes = [UInt8](repeating: 0, count: wanted)
        var done = 0
        while done < wanted {
            let got = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + done, wanted - done, off_t(offset) + off_t(done))
            }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else {
                let reason = got == 0 ? "it ended early" : String(cString: strerror(errno))
                throw StorageError("cannot read the backup's snapshot at byte \(offset + UInt64(done)): \(reason)")
            }
            done += got
        }
        return bytes
    }
}
