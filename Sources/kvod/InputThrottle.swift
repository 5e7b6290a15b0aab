import KVOEngine

/// TCP-like backpressure for one client that does not read its replies:
/// while active, the connection does not read from the socket, and the lines
/// of the last read that were not answered yet wait here, copied.
///
/// What waits is bounded by one read (64 KiB) plus one line under way
/// (`--max-line-bytes`), so a client that keeps sending without reading costs
/// at most that plus the hard output limit; its replies are delayed, never
/// dropped.
struct InputThrottle {
    private enum Deferred {
        case line([UInt8])
        case tooLarge
    }

    /// Whether reading is paused.
    var isActive = false
    /// Set when the peer half-closed while lines still waited: close after them.
    var peerFinished = false
    private var deferred: [Deferred] = []
    private var next = 0

    var hasDeferred: Bool { next < deferred.count }

    /// Keeps `frame` (copying the line, whose bytes are only lent) for later.
    mutating func `defer`(_ frame: LineFramer.Frame) {
        switch frame {
        case .line(let bytes): deferred.append(.line(Array(bytes)))
        case .tooLarge: deferred.append(.tooLarge)
        }
    }

    /// Passes the oldest waiting frame to `body`; false when none waits.
    mutating func handleNext(_ body: (LineFramer.Frame) -> Void) -> Bool {
        guard hasDeferred else { return false }
        let frame = deferred[next]
        deferred[next] = .tooLarge  // release the bytes now
        next += 1
        if next == deferred.count {
            deferred.removeAll(keepingCapacity: false)
            next = 0
        }
        switch frame {
        case .line(let bytes): bytes.withUnsafeBytes { body(.line($0)) }
        case .tooLarge: body(.tooLarge)
        }
        return true
    }
}
