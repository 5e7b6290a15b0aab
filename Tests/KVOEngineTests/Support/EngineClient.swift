import KVOEngine

/// One client of an in-process engine: sends request lines, takes the lines
/// the engine wrote for it. What the daemon does, without a socket.
final class EngineClient {
    let engine: Engine
    let controller: ClientController

    init(_ engine: Engine) {
        self.engine = engine
        self.controller = engine.makeClient()
    }

    /// Sends one request; returns every line it produced for this client (events, then the reply).
    @discardableResult
    func send(_ line: String) -> [String] {
        Array(line.utf8).withUnsafeBytes { engine.handle(line: $0, from: controller) }
        return takeLines()
    }

    /// The reply to `line`, parsed (the last line it produced).
    func reply(_ line: String) throws -> JSONValue {
        try JSONReader.parse(send(line).last ?? "")
    }

    /// Lines waiting in the client's output, which is left empty.
    func takeLines() -> [String] {
        var bytes: [UInt8] = []
        controller.takeOutput(into: &bytes)
        return bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
    }
}
