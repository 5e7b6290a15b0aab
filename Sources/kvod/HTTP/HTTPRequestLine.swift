/// The input side of an HTTP request's ``ClientStream``: the one request line
/// it becomes, handed to its connection once that reads.
struct HTTPRequestLine {
    private var line: [UInt8]
    private var onBytes: ((UnsafeRawBufferPointer) -> Void)?

    init(_ line: [UInt8]) {
        self.line = line
    }

    /// The connection started reading (``ClientStream/startReading(onBytes:onEnd:)``).
    mutating func connectionReads(_ onBytes: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.onBytes = onBytes
    }

    /// The next request's line, for a connection that reads already.
    mutating func replaceLine(_ line: [UInt8]) {
        self.line = line
    }

    /// Hands the line over, once.
    mutating func send() {
        let sent = line
        line = []
        sent.withUnsafeBytes { onBytes?($0) }
    }

    /// The connection closed: nothing more goes to it.
    mutating func end() {
        onBytes = nil
    }
}

/// A ``ClientStream`` whose input is one request line: an HTTP request's
/// (``HTTPExchange``, ``HTTPEventStream``).
protocol HTTPRequestStream: ClientStream {
    var input: HTTPRequestLine { get set }
}

extension HTTPRequestStream {
    func startReading(onBytes: @escaping (UnsafeRawBufferPointer) -> Void,
                      onEnd: @escaping (UVError?) -> Void) throws(UVError) {
        input.connectionReads(onBytes)
    }

    /// Hands the request line to the connection, once it reads.
    func sendRequest() { input.send() }

    func stopReading() {}
    func resumeReading() throws(UVError) {}
    /// Nothing waits in a socket: closing is all there is to it.
    func shutdownThenClose(onClosed: (() -> Void)?) { close(onClosed: onClosed) }
}
