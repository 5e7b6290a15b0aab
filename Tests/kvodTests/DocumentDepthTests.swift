import Foundation
import KVOEngine
@testable import KVOStorage
import KVOTestSupport
import KVOValues
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// docs/PROTOCOL.md, "Nesting": kvod accepts no object deeper than it can load
/// again, and a row it cannot load costs that object, not the data directory.
@Suite struct DocumentDepthTests {
    /// `k.k.…` with `count` keys.
    static func keyPath(_ count: Int) -> String {
        Array(repeating: "k", count: count).joined(separator: ".")
    }

    /// A JSON array nested `levels` deep around 1.
    static func nested(_ levels: Int) -> String {
        String(repeating: "[", count: levels) + "1" + String(repeating: "]", count: levels)
    }

    @Test func deepestAcceptedObjectsSurviveARestart() throws {
        let data = try DataDirectory()
        let deepPath = #"{"op":"set","object":"path","keyPath":"\#(Self.keyPath(DocumentDepth.limit))","value":1}"#
        let deepValue = #"{"op":"set","object":"value","keyPath":"k","value":\#(Self.nested(DocumentDepth.limit - 1))}"#
        let deepElement = #"{"op":"insert","object":"array","keyPath":"\#(Self.keyPath(DocumentDepth.limit - 2))","#
            + #""values":[[1]]}"#
        // The deepest element an array at a key path of one key takes.
        let deepOneKeyElement = #"{"op":"insert","object":"shallow","keyPath":"k","value":\#(Self.nested(DocumentDepth.limit - 2))}"#
        var before: [JSONValue] = []
        do {
            let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
            let client = try LineClient(path: kvod.socketPath)
            // A whole deepest object deleted: its history row holds it as `old`.
            let deleted = [deepPath.replacingOccurrences(of: #""path""#, with: #""gone""#), #"{"op":"delete","object":"gone"}"#]
            for line in [deepPath, deepValue, deepElement, deepOneKeyElement] + deleted {
                #expect(try client.request(line).reply["ok"] == true)
            }
            for object in ["path", "value", "array", "shallow"] {
                before.append(try client.request(#"{"op":"get","object":"\#(object)"}"#).reply["value"] ?? .null)
            }
            try kvod.terminate()
        }
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        let client = try LineClient(path: kvod.socketPath)
        for (object, value) in zip(["path", "value", "array", "shallow"], before) {
            #expect(value != .null)
            #expect(try client.request(#"{"op":"get","object":"\#(object)"}"#).reply["value"] == value)
        }
        try kvod.terminate()
        #expect(!kvod.stderrText().contains("quarantine"), "\(kvod.stderrText())")
    }

    @Test(arguments: [
        // One key too many, a value one level too deep, an element one level too deep.
        #"{"op":"set","object":"o","keyPath":"\#(keyPath(DocumentDepth.limit + 1))","value":1}"#,
        #"{"op":"set","object":"o","keyPath":"\#(keyPath(DocumentDepth.limit))","value":[]}"#,
        #"{"op":"set","id":1,"object":"o","keyPath":"\#(keyPath(2))","value":\#(nested(DocumentDepth.limit - 1))}"#,
        #"{"op":"insert","object":"o","keyPath":"\#(keyPath(DocumentDepth.limit - 1))","values":[[1]]}"#,
        #"{"op":"replace","object":"o","keyPath":"\#(keyPath(DocumentDepth.limit - 1))","index":0,"value":[]}"#,
        // An element as `value` at a key path of one key: one level inside the line, one too deep for the array.
        #"{"op":"insert","object":"o","keyPath":"k","value":\#(nested(DocumentDepth.limit - 1))}"#,
        #"{"op":"replace","object":"o","keyPath":"k","index":0,"value":\#(nested(DocumentDepth.limit - 1))}"#,
        // Inside a batch, after an op that would be fine: the whole batch is refused.
        #"{"op":"batch","ops":[{"op":"set","object":"o","keyPath":"k","value":1},"#
            + #"{"op":"set","object":"o","keyPath":"\#(keyPath(DocumentDepth.limit + 1))","value":1}]}"#,
    ])
    func oneLevelDeeperIsRefusedNamingTheLimit(request: String) throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        let reply = try client.request(request).reply
        #expect(reply["error"]?["code"] == "bad_request")
        guard case .string(let message)? = reply["error"]?["message"] else {
            Issue.record("no message: \(reply)")
            return
        }
        #expect(message.contains("deeper than \(DocumentDepth.limit) levels"), "\(message)")
        #expect(try client.request(#"{"op":"get","object":"o"}"#).reply["error"]?["code"] == "not_found")
    }

    @Test func dataDirectoryHoldingUnreadableRowsStartsWithoutThem() throws {
        let data = try DataDirectory()
        var seq = 0
        do {
            let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
            let client = try LineClient(path: kvod.socketPath)
            _ = try client.request(#"{"op":"set","object":"good","keyPath":"k","value":1}"#)
            _ = try client.request(#"{"op":"set","object":"bad\nline","keyPath":"k","value":2}"#)
            seq = try client.request(#"{"op":"set","object":"good","keyPath":"j","value":3}"#).reply["seq"]?.intValue ?? -1
            try kvod.terminate()
        }
        do {
            // What an older kvod could write: a member nested past every reader's limit;
            // and a history batch row cut short (as a disk could corrupt it).
            let database = try SQLiteConnection(path: data.path + "/" + StateDatabase.fileName)
            let tooDeep = Self.nested(DocumentDepth.readerLimit + 1)
            try database.execute("UPDATE members SET value = '\(tooDeep)' WHERE object = 'bad' || char(10) || 'line'")
            try database.execute("UPDATE history_batches SET changes = substr(changes, 1, length(changes) - 1) WHERE last_seq = 2")
        }
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        let client = try LineClient(path: kvod.socketPath)
        #expect(try client.request(#"{"op":"get","object":"good"}"#).reply["value"] == ["k": 1, "j": 3])
        #expect(try client.request(#"{"op":"get","object":"bad\nline"}"#).reply["error"]?["code"] == "not_found")
        // The seq goes on; the history before the bad row is gone, so a resume from before it is refused.
        #expect(try client.request(#"{"op":"info"}"#).reply["seq"]?.intValue == seq)
        let resume = try client.request(#"{"op":"observe","object":"good","keyPath":"k","since":1}"#).reply
        #expect(resume["error"]?["code"] == "compacted", "\(resume)")
        #expect(try client.request(#"{"op":"set","object":"good","keyPath":"k","value":4}"#).reply["seq"]?.intValue == seq + 1)
        try kvod.terminate()
        let log = kvod.stderrText()
        #expect(log.contains(#"object "bad\nline" moved to the quarantine table"#), "\(log)")
        #expect(log.contains("history batch row 2 moved to the quarantine table"), "\(log)")
        do {
            let database = try SQLiteConnection(path: data.path + "/" + StateDatabase.fileName)
            #expect(try database.integer("SELECT COUNT(*) FROM quarantine") == 2)
        }

        // Once moved aside, they are not met again.
        let again = try KVODProcess(arguments: ["--data-dir", data.path])
        try again.terminate()
        #expect(!again.stderrText().contains("quarantine"), "\(again.stderrText())")
    }
}
