/// The frames of the event lines of the last write, for the streams that
/// frame the same lines next: a change observed by a thousand watches gets a
/// thousand copies of one line, read and framed here once, not once per
/// stream (docs/PERFORMANCE.md, "Frames shared between watches"). Each stream's
/// write of a loop turn holds the same events in the same order, so the frame
/// of a write's Nth line is kept in slot N and checked against the next
/// write's Nth line by its bytes: a stream that got other lines is framed
/// right, only not from the cache. The last write's frames are kept whole
/// too, for a stream whose write and framer state are the same as its.
/// Loop-confined, one per server; at most ``slots`` lines of up to
/// ``maxLineBytes`` each are kept, and a write of up to ``maxWriteBytes``.
public final class HTTPFrameCache {
    private var frames: [HTTPFrame] = []
    static let slots = 256
    static let maxLineBytes = 1_024
    static let maxWriteBytes = 1 << 16

    /// The last write framed line by line, its frames, and the framer before and after it.
    private var lastWrite: [UInt8] = []
    private var lastFrames: HTTPFrozenBytes?
    private var framerBefore: HTTPEventFramer?
    private var framerAfter: HTTPEventFramer?

    public init() {}

    /// The frame of `line`, the `slot`th line of a stream's write, from the
    /// cache, or made (and kept when it fits) when the slot holds another line.
    func frame(of line: UnsafeRawBufferPointer, slot: Int) -> HTTPFrameReference {
        guard slot < Self.slots, line.count <= Self.maxLineBytes else { return .own(HTTPFrame(line)) }
        while frames.count <= slot { frames.append(HTTPFrame()) }
        if !frames[slot].holds(line) { frames[slot].load(line) }
        return .cached(slot)
    }

    /// Appends the frame in `slot` (see ``HTTPFrame/append(epoch:count:to:)``).
    func appendFrame(inSlot slot: Int, epoch: [UInt8], count: Int, to output: inout [UInt8]) {
        frames[slot].append(epoch: epoch, count: count, to: &output)
    }

    func seq(inSlot slot: Int) -> Int? { frames[slot].seq }

    /// The frames of `write` (whole lines), with `framer` moved on as framing
    /// them would, if they are the last write's from the same framer state;
    /// nil (and nothing done) otherwise.
    public func replay(_ write: UnsafeRawBufferPointer, framer: inout HTTPEventFramer) -> HTTPFrozenBytes? {
        guard let lastFrames, let framerBefore, let framerAfter, framer == framerBefore,
              lastWrite.withUnsafeBytes({ $0.hasSameBytes(as: write) }) else { return nil }
        framer = framerAfter
        return lastFrames
    }

    /// Keeps `write` (whole lines), framed line by line into `frames` by a
    /// framer that was `before` and is now `after`, for ``replay(_:framer:)``.
    public func remember(_ write: UnsafeRawBufferPointer, frames: ArraySlice<UInt8>, before: HTTPEventFramer,
                         after: HTTPEventFramer) {
        guard write.count <= Self.maxWriteBytes, frames.count <= 2 * Self.maxWriteBytes else {
            (lastWrite, lastFrames, framerBefore, framerAfter) = ([], nil, nil, nil)
            return
        }
        lastWrite.removeAll(keepingCapacity: true)
        lastWrite.append(contentsOf: write)
        // A new buffer: streams may still be sending the last one.
        lastFrames = HTTPFrozenBytes(frames)
        (framerBefore, framerAfter) = (before, after)
    }
}

/// Where a line's frame is: in a slot of the cache, or made for this line alone.
enum HTTPFrameReference {
    case cached(Int)
    case own(HTTPFrame)
}
