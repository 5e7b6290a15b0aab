/// What a ``ClientConnection`` reads its request lines from and writes its
/// output to: a socket (``UVStream``) or one HTTP request (``HTTPExchange``),
/// so that both doors share one connection's rules (flushing, output held for
/// a commit, output limits, closing).
protocol ClientStream: AnyObject {
    /// Output handed over and not yet taken by the peer.
    var queuedBytes: Int { get }
    /// Called when `queuedBytes` falls back to 0.
    var onDrained: (() -> Void)? { get set }
    /// Called after queued output was taken.
    var onWritten: (() -> Void)? { get set }
    /// Called once, for the first write error.
    var onWriteError: ((UVError) -> Void)? { get set }
    func startReading(onBytes: @escaping (UnsafeRawBufferPointer) -> Void,
                      onEnd: @escaping (UVError?) -> Void) throws(UVError)
    func stopReading()
    func resumeReading() throws(UVError)
    /// Writes `bytes`, copying what it keeps. `bytes` may be a client's output
    /// lent without a reference (``ClientConnection``'s flush): it must not be
    /// read after a callback that can close the connection (``onWriteError``),
    /// which frees that output.
    func write(_ bytes: UnsafeRawBufferPointer)
    /// Lets queued output reach the peer, then closes.
    func shutdownThenClose(onClosed: (() -> Void)?)
    /// Closes at once; queued output is dropped.
    func close(onClosed: (() -> Void)?)
}

extension ClientStream {
    func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { write($0) } }
}

extension UVStream: ClientStream {}
