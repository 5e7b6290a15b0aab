import KVOEngine

/// Records what a ``ClientController`` tells its delegate (FBKVOTesting's
/// recording observer, for the output side).
final class RecordingOutputDelegate: ClientOutputDelegate {
    var hasOutputCalls = 0
    var congestedCalls = 0
    var disconnectReasons: [String] = []

    func clientControllerHasOutput(_ controller: ClientController) { hasOutputCalls += 1 }
    func clientControllerBecameCongested(_ controller: ClientController) { congestedCalls += 1 }
    func clientController(_ controller: ClientController, mustDisconnectBecause reason: String) {
        disconnectReasons.append(reason)
    }
}

extension Engine {
    /// Handles one request line given as text.
    func handle(_ line: String, from client: ClientController) {
        Array(line.utf8).withUnsafeBytes { handle(line: $0, from: client) }
    }
}

extension ClientController {
    /// Takes the pending output as parsed lines.
    func takeLines() throws -> [JSONValue] {
        var bytes: [UInt8] = []
        takeOutput(into: &bytes)
        return try bytes.split(separator: UInt8(ascii: "\n")).map { try JSONReader.parse($0) }
    }
}

extension JSONValue {
    var intValue: Int? {
        if case .number(let number) = self { return number.intValue }
        return nil
    }
}
