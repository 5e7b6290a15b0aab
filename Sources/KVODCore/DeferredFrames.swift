import KVOValues

/// The lines of a read that were not handled yet because reading paused
/// (``ConnectionState``: replies pile up, a change awaits its observers, or
/// the turn's budget is spent), copied, in order.
///
/// What waits is bounded by one read (64 KiB) plus one line under way
/// (`--max-line-bytes`), so a client that keeps sending without reading costs
/// at most that plus the hard output limit; its replies are delayed, never
/// dropped.
public struct DeferredFrames: Sendable {
    /// A frame put aside: its line copied, since a read only lends its bytes.
    public enum Frame: Sendable, Equatable {
        case line([UInt8])
        case tooLarge

        /// Lends the frame to `body` as ``LineFramer`` would have.
        public func withFrame(_ body: (LineFramer.Frame) -> Void) {
            switch self {
            case .line(let bytes): bytes.withUnsafeBytes { body(.line($0)) }
            case .tooLarge: body(.tooLarge)
            }
        }
    }

    private var deferred: [Frame] = []
    private var next = 0

    public init() {}

    /// Whether a frame waits.
    public var hasDeferred: Bool { next < deferred.count }

    /// Keeps `frame` (copying the line, whose bytes are only lent) for later.
    public mutating func `defer`(_ frame: LineFramer.Frame) {
        switch frame {
        case .line(let bytes): deferred.append(.line(Array(bytes)))
        case .tooLarge: deferred.append(.tooLarge)
        }
    }

    /// Takes the oldest waiting frame; nil when none waits.
    public mutating func takeNext() -> Frame? {
        guard hasDeferred else { return nil }
        let frame = deferred[next]
        deferred[next] = .tooLarge  // release the bytes now
        next += 1
        if next == deferred.count {
            deferred.removeAll(keepingCapacity: false)
            next = 0
        }
        return frame
    }
}
