import KVODCore

/// One HTTP request served as a client connection: the ``ClientStream`` of a
/// ``ClientConnection`` whose input is the request's one line and whose first
/// line of output, the reply, becomes the response. So an HTTP request goes
/// through what a socket client's does: decoding, the op table, the policy,
/// output held until its change is committed, replies that wait for etcd.
/// Once answered, the exchange and its connection may serve a later request
/// of the same subject (``HTTPIdleConnections``, ``begin(key:shape:requestLine:)``).
/// Loop-confined.
final class HTTPExchange: HTTPRequestStream {
    /// Names the request served now in ``HTTPGateway``'s table and H2O's gone callback.
    private(set) var key: UInt64
    /// How the reply becomes the response.
    private(set) var shape: HTTPAnswerShape
    var input: HTTPRequestLine
    /// Output up to the reply's newline.
    private var output: [UInt8] = []
    /// Whether the request served now was answered (or the connection closed first).
    private(set) var isAnswered = false
    /// Called once per request: with the reply line (without its newline), or
    /// with nil when the connection closed before a reply (kvod is stopping).
    private let answer: (HTTPExchange, [UInt8]?) -> Void

    var queuedBytes: Int { 0 }
    var onDrained: (() -> Void)?
    var onWritten: (() -> Void)?
    var onWriteError: ((UVError) -> Void)?

    init(key: UInt64, shape: HTTPAnswerShape, requestLine: [UInt8],
         answer: @escaping (HTTPExchange, [UInt8]?) -> Void) {
        self.key = key
        self.shape = shape
        input = HTTPRequestLine(requestLine)
        self.answer = answer
    }

    /// Serves the next request on an answered exchange whose connection was
    /// set aside and taken back; ``sendRequest()`` hands its line over.
    func begin(key: UInt64, shape: HTTPAnswerShape, requestLine: [UInt8]) {
        precondition(isAnswered, "an exchange serves one request at a time")
        self.key = key
        self.shape = shape
        isAnswered = false
        input.replaceLine(requestLine)
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        guard !isAnswered else { return }
        output.append(contentsOf: bytes)
        guard let end = output.firstIndex(of: 0x0A) else { return }
        isAnswered = true
        let reply = Array(output[..<end])
        // Not kept for the next request: a reply may be as long as a line may be.
        output = []
        answer(self, reply)
    }

    func close(onClosed: (() -> Void)?) {
        input.end()
        if !isAnswered {
            isAnswered = true
            answer(self, nil)
        }
        onClosed?()
    }
}
