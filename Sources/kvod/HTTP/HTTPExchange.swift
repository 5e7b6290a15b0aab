/// One HTTP request served as a client connection: the ``ClientStream`` of a
/// ``ClientConnection`` whose input is the request's one line and whose first
/// line of output, the reply, becomes the response. So an HTTP request goes
/// through what a socket client's does: decoding, the op table, the policy,
/// output held until its change is committed, replies that wait for etcd.
/// Loop-confined.
final class HTTPExchange: HTTPRequestStream {
    /// Names the exchange in ``HTTPGateway``'s table and H2O's gone callback.
    let key: UInt64
    var input: HTTPRequestLine
    /// Output up to the reply's newline.
    private var output: [UInt8] = []
    private var isAnswered = false
    /// Called once: with the reply line (without its newline), or with nil
    /// when the connection closed before a reply (kvod is stopping).
    private let answer: ([UInt8]?) -> Void

    var queuedBytes: Int { 0 }
    var onDrained: (() -> Void)?
    var onWritten: (() -> Void)?
    var onWriteError: ((UVError) -> Void)?

    init(key: UInt64, requestLine: [UInt8], answer: @escaping ([UInt8]?) -> Void) {
        self.key = key
        input = HTTPRequestLine(requestLine)
        self.answer = answer
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        guard !isAnswered else { return }
        output.append(contentsOf: bytes)
        guard let end = output.firstIndex(of: 0x0A) else { return }
        isAnswered = true
        answer(Array(output[..<end]))
        output = []
    }

    func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { write($0) } }

    func shutdownThenClose(onClosed: (() -> Void)?) { close(onClosed: onClosed) }

    func close(onClosed: (() -> Void)?) {
        input.end()
        if !isAnswered {
            isAnswered = true
            answer(nil)
        }
        onClosed?()
    }
}
