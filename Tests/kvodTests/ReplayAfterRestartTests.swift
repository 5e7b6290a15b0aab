import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// A `since` replay after a restart with `--data-dir` says what the live
/// events said, byte for byte: also where a change made its object (`old`
/// null, not `{}`), emptied it, deleted it, or did so inside a batch
/// (issue 33, row 8).
@Suite struct ReplayAfterRestartTests {
    /// Observations that read whole documents (and an ancestor of a changed path) as of each change.
    /// One key path each: the order of one change's events to sibling key paths is the path index's
    /// hash order, which another process need not share.
    static let observations = [
        #"{"op":"observe","object":"fresh","options":["new","old"]}"#,
        #"{"op":"observe","object":"fresh","keyPath":"k","options":["new","old","prior"]}"#,
        #"{"op":"observe","object":"fresh","keyPath":"a","options":["new","old","prior"]}"#,
        #"{"op":"observe","prefix":"fr","options":["new","old"]}"#,
    ]

    /// Makes `fresh` (and `frog`) several times over: by a set under a key
    /// path, an insert, a batch, a whole document; empties and deletes them.
    static let changes = [
        #"{"op":"set","object":"fresh","keyPath":"k","value":1}"#,
        #"{"op":"set","object":"fresh","keyPath":"a.b","value":2}"#,
        #"{"op":"delete","object":"fresh","keyPath":"k"}"#,
        #"{"op":"delete","object":"fresh","keyPath":"a"}"#,
        #"{"op":"delete","object":"fresh"}"#,
        #"{"op":"insert","object":"fresh","keyPath":"a.list","values":[1]}"#,
        #"{"op":"delete","object":"fresh"}"#,
        #"{"op":"batch","ops":[{"op":"set","object":"fresh","keyPath":"k","value":3},{"op":"set","object":"frog","keyPath":"x","value":1},{"op":"delete","object":"frog"},{"op":"set","object":"frog","keyPath":"y","value":2},{"op":"delete","object":"frog","keyPath":"y"}]}"#,
        #"{"op":"set","object":"fresh","value":{"k":4}}"#,
        #"{"op":"delete","object":"fresh","keyPath":"k"}"#,
    ]

    /// Sends `request` and returns the lines before its reply, as kvod wrote them.
    static func linesBeforeReply(_ client: LineClient, _ request: String) throws -> [String] {
        try client.send(request)
        var lines: [String] = []
        while true {
            let line = try client.readLine()
            let message = try JSONReader.parse(Array(line.utf8), maxDepth: 64)
            if message["ok"] != nil {
                #expect(message["ok"] == true, "\(request): \(line)")
                return lines
            }
            lines.append(line)
        }
    }

    /// What each observation replays from seq 0, by a new connection.
    static func replays(_ kvod: KVODProcess) throws -> [[String]] {
        try observations.map { observe in
            let client = try LineClient(path: kvod.socketPath)
            return try linesBeforeReply(client, String(observe.dropLast()) + #","since":0}"#)
        }
    }

    @Test func replayAfterARestartSaysWhatTheLiveEventsSaid() throws {
        let data = try DataDirectory()
        let live: [[String]]
        do {
            let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
            let observers = try Self.observations.map { observe in
                let client = try LineClient(path: kvod.socketPath)
                #expect(try Self.linesBeforeReply(client, observe).isEmpty)
                return client
            }
            let writer = try LineClient(path: kvod.socketPath)
            for change in Self.changes { _ = try Self.linesBeforeReply(writer, change) }
            // Each observer's events were queued before the writer's reply, so before its own ping's.
            live = try observers.map { try Self.linesBeforeReply($0, #"{"op":"ping"}"#) }
            #expect(live.allSatisfy { !$0.isEmpty })
            #expect(live[0].first?.contains(#""old":null"#) == true, "\(live[0])")
            #expect(try Self.replays(kvod) == live, "before the restart")
            try kvod.terminate()
        }
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        let replayed = try Self.replays(kvod)
        for (index, observe) in Self.observations.enumerated() {
            #expect(replayed[index] == live[index], "\(observe)")
        }
    }
}
