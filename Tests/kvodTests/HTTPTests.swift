import Foundation
import KVOEngine
import KVOValues
import KVOTestSupport
import Testing

/// Issue 31's HTTP door against the real kvod, called with the real curl:
/// health without a token, the object API with one, its errors, conditions and
/// limits, and that HTTP and the socket share one engine and one policy.
@Suite struct HTTPTests {
    /// A token and the `--http-tokens` line for it.
    static let token = "k3Vd-test-token-6f1d"

    /// kvod with `--http` on a free loopback port and a tokens file whose one
    /// token acts as `subject`; returns it and the base URL.
    static func start(subject: String = "uid:\(getuid())", arguments: [String] = []) throws -> (KVODProcess, String) {
        let folder = try TemporaryDirectory.make()
        let tokens = folder + "/tokens"
        try "# who may use HTTP\n\(subject) \(sha256Hex(token))\n".write(toFile: tokens, atomically: true, encoding: .utf8)
        chmod(tokens, 0o600)
        let kvod = try KVODProcess(arguments: ["--http", "127.0.0.1:0", "--http-tokens", tokens,
                                               "--http-allow-root-token"] + arguments)
        let line = try kvod.waitForLog(containing: "serving HTTP on ")
        guard let range = line.range(of: "http://") ?? line.range(of: "https://") else { throw TestFailure("no URL in \(line)") }
        return (kvod, String(line[range.lowerBound...]).trimmingCharacters(in: .whitespaces))
    }

    static func sha256Hex(_ text: String) throws -> String {
        let run = try CommandRun.run(URL(fileURLWithPath: "/usr/bin/sha256sum"), [], stdin: text)
        return String(run.stdout.prefix(64))
    }

    /// One HTTP exchange through curl: status, headers (lower-case names), body.
    struct Response {
        let status: Int
        let headers: [String: String]
        let body: String
        var json: JSONValue? { try? JSONReader.parse(body) }
    }

    static func call(_ method: String, _ url: String, token: String? = HTTPTests.token, body: String? = nil,
                     headers: [String] = []) throws -> Response {
        var arguments = ["-s", "-S", "-i", "-X", method, "--max-time", "10"]
        if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["--data-binary", body] }
        let run = try CommandRun.run(URL(fileURLWithPath: "/usr/bin/curl"), arguments + [url])
        guard run.status == 0 else { throw TestFailure("curl failed (\(run.status)): \(run.stderr)") }
        let parts = run.stdout.components(separatedBy: "\r\n\r\n")
        let head = parts[0].components(separatedBy: "\r\n")
        let status = Int(head[0].split(separator: " ")[1]) ?? 0
        var fields: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, headers: fields, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test func healthAndReadinessAnswerWithoutAToken() throws {
        let (kvod, base) = try Self.start()
        defer { withExtendedLifetime(kvod) {} }
        let health = try Self.call("GET", base + "/healthz", token: nil)
        #expect(health.status == 200 && health.body == "ok\n")
        let ready = try Self.call("GET", base + "/readyz", token: nil)
        #expect(ready.status == 200 && ready.body == "ready\n")
        let posted = try Self.call("POST", base + "/healthz", token: nil)
        #expect(posted.status == 405 && posted.headers["allow"] == "GET, HEAD")
    }

    @Test func aValuePutOverHTTPIsTheSocketsAndItsObserversHearIt() throws {
        let (kvod, base) = try Self.start()
        let observer = try LineClient(path: kvod.socketPath)
        _ = try observer.request(#"{"op":"observe","object":"cfg","keyPath":"port","options":["new"]}"#)
        let put = try Self.call("PUT", base + "/v1/objects/cfg/port", body: "8080")
        #expect(put.status == 200 && put.json?["seq"] == 1 && put.headers["etag"] == "\"1\"")
        let event = try observer.readJSON()
        #expect(event["new"] == 8080 && event["object"] == "cfg")
        let socket = try LineClient(path: kvod.socketPath)
        #expect(try socket.request(#"{"op":"get","object":"cfg","keyPath":"port"}"#).reply["value"] == 8080)
        _ = try socket.request(#"{"op":"set","object":"cfg","keyPath":"server.name","value":"a b"}"#)
        let got = try Self.call("GET", base + "/v1/objects/cfg/server/name")
        #expect(got.status == 200 && got.body == "\"a b\"\n" && got.headers["etag"] == "\"2\"")
        let whole = try Self.call("GET", base + "/v1/objects/cfg")
        #expect(whole.json == ["port": 8080, "server": ["name": "a b"]])
        let deleted = try Self.call("DELETE", base + "/v1/objects/cfg/port")
        #expect(deleted.status == 200 && deleted.json?["seq"] == 3)
        let gone = try Self.call("GET", base + "/v1/objects/cfg/port")
        #expect(gone.status == 404 && gone.json?["code"] == "not_found")
        let info = try Self.call("GET", base + "/v1/info")
        #expect(info.status == 200 && info.json?["seq"] == 3 && info.json?["ok"] == nil)
    }

    @Test func aRequestWithoutAValidTokenIsRefusedAndChangesNothing() throws {
        let (kvod, base) = try Self.start()
        let none = try Self.call("PUT", base + "/v1/objects/a/b", token: nil, body: "1")
        #expect(none.status == 401 && none.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
        let wrong = try Self.call("PUT", base + "/v1/objects/a/b", token: Self.token + "x", body: "1")
        #expect(wrong.status == 401)
        // The scheme is matched without regard to case (RFC 9110); only Bearer is known.
        for scheme in ["Basic", "Bearerx", "Bear"] {
            let other = try Self.call("PUT", base + "/v1/objects/a/b", token: nil, body: "1",
                                      headers: ["Authorization: \(scheme) \(Self.token)"])
            #expect(other.status == 401, "\(scheme)")
        }
        let socket = try LineClient(path: kvod.socketPath)
        #expect(try socket.request(#"{"op":"info"}"#).reply["seq"] == 0)
        let anyCase = try Self.call("GET", base + "/v1/objects/a/b", token: nil, headers: ["Authorization: bEaReR   \(Self.token)"])
        #expect(anyCase.status == 404 && anyCase.json?["code"] == "not_found")
    }

    @Test func conditionsAreIfMatchAndIfNoneMatch() throws {
        let (kvod, base) = try Self.start()
        defer { withExtendedLifetime(kvod) {} }
        let created = try Self.call("PUT", base + "/v1/objects/c/n", body: "1", headers: ["If-None-Match: *"])
        #expect(created.status == 200 && created.headers["etag"] == "\"1\"")
        let again = try Self.call("PUT", base + "/v1/objects/c/n", body: "2", headers: ["If-None-Match: *"])
        #expect(again.status == 412 && again.headers["etag"] == "\"1\"" && again.json?["code"] == "precondition_failed")
        let stale = try Self.call("PUT", base + "/v1/objects/c/n", body: "2", headers: ["If-Match: \"7\""])
        #expect(stale.status == 412 && stale.json?["modSeq"] == 1)
        let current = try Self.call("PUT", base + "/v1/objects/c/n", body: "2", headers: ["If-Match: \"1\""])
        #expect(current.status == 200 && current.headers["etag"] == "\"2\"")
        #expect(try Self.call("GET", base + "/v1/objects/c/n").body == "2\n")
    }

    @Test func badInputGetsTheSocketsErrorCodesAndChangesNothing() throws {
        let (kvod, base) = try Self.start()
        // A body is one value: members of its own or a second value are not spliced into the request.
        let smuggled = try Self.call("PUT", base + "/v1/objects/x/v", body: #"1,"object":"other""#)
        #expect(smuggled.status == 400 && smuggled.json?["code"] == "bad_json")
        let lines = try Self.call("PUT", base + "/v1/objects/x/v", body: "1\n{\"op\":\"set\",\"object\":\"y\",\"value\":{}}")
        #expect(lines.status == 400 && lines.json?["code"] == "bad_json")
        let notObject = try Self.call("PUT", base + "/v1/objects/x", body: "[1]")
        #expect(notObject.status == 400 && notObject.json?["code"] == "not_an_object")
        let escape = try Self.call("GET", base + "/v1/objects/x%zz")
        #expect(escape.status == 400 && escape.json?["code"] == "bad_request")
        let method = try Self.call("POST", base + "/v1/objects/x", body: "1")
        #expect(method.status == 405 && method.headers["allow"] == "GET, HEAD, PUT, DELETE")
        let nowhere = try Self.call("GET", base + "/v2/objects/x")
        #expect(nowhere.status == 404 && nowhere.json?["code"] == "not_found")
        let socket = try LineClient(path: kvod.socketPath)
        #expect(try socket.request(#"{"op":"info"}"#).reply["seq"] == 0)
        // A name with a slash is written %2F; it is one segment.
        let slashed = try Self.call("PUT", base + "/v1/objects/app%2Fweb/port", body: "1")
        #expect(slashed.status == 200)
        #expect(try socket.request(#"{"op":"get","object":"app/web","keyPath":"port"}"#).reply["value"] == 1)
    }

    @Test func theTokensSubjectIsWhomThePolicyJudges() throws {
        let folder = try TemporaryDirectory.make()
        let policy = folder + "/policy.json"
        let uid = getuid() == 0 ? 4321 : getuid() &+ 1
        try #"{"grants": [{"uid": \#(uid), "prefix": "public/", "allow": ["read"]}]}"#
            .write(toFile: policy, atomically: true, encoding: .utf8)
        let (kvod, base) = try Self.start(subject: "uid:\(uid)", arguments: ["--policy", policy])
        let socket = try LineClient(path: kvod.socketPath)
        _ = try socket.request(#"{"op":"set","object":"public/a","keyPath":"v","value":1}"#)
        _ = try socket.request(#"{"op":"set","object":"private/a","keyPath":"v","value":2}"#)
        // Here "public" is the name and "a.v" the key path: no grant.
        #expect(try Self.call("GET", base + "/v1/objects/public/a/v").status == 403)
        #expect(try Self.call("GET", base + "/v1/objects/public%2Fa/v").body == "1\n")
        let hidden = try Self.call("GET", base + "/v1/objects/private%2Fa/v")
        #expect(hidden.status == 403 && hidden.json?["code"] == "forbidden")
        let write = try Self.call("PUT", base + "/v1/objects/public%2Fa/v", body: "3")
        #expect(write.status == 403)
        #expect(try socket.request(#"{"op":"get","object":"public/a","keyPath":"v"}"#).reply["value"] == 1)
    }

    @Test func aChangeIsAnsweredOnceCommittedAndSurvivesARestart() throws {
        let data = try TemporaryDirectory.make() + "/data"
        var (kvod, base) = try Self.start(arguments: ["--data-dir", data])
        #expect(try Self.call("PUT", base + "/v1/objects/d/v", body: #"{"kept":true}"#).status == 200)
        #expect(try kvod.terminate() == 0)
        (kvod, base) = try Self.start(arguments: ["--data-dir", data])
        #expect(try Self.call("GET", base + "/v1/objects/d/v").json == ["kept": true])
    }

    @Test func aTokensFileOthersMayReadOrARootTokenIsRefusedAtStart() throws {
        let folder = try TemporaryDirectory.make()
        let tokens = folder + "/tokens"
        try "uid:\(getuid() == 0 ? 1 : getuid()) \(Self.sha256Hex("t"))\n".write(toFile: tokens, atomically: true, encoding: .utf8)
        chmod(tokens, 0o644)
        let open = try KVODProcess(arguments: ["--http", ":0", "--http-tokens", tokens], waitForSocket: false)
        #expect(try open.waitForExit() == 1)
        #expect(open.stderrText().contains("chmod 600"))
        try "uid:0 \(Self.sha256Hex("t"))\n".write(toFile: tokens, atomically: true, encoding: .utf8)
        chmod(tokens, 0o600)
        let root = try KVODProcess(arguments: ["--http", ":0", "--http-tokens", tokens], waitForSocket: false)
        #expect(try root.waitForExit() == 1)
        #expect(root.stderrText().contains("--http-allow-root-token"))
        let beyond = try KVODProcess(arguments: ["--http", "0.0.0.0:0"], waitForSocket: false)
        #expect(try beyond.waitForExit() != 0)
        #expect(beyond.stderrText().contains("--http-insecure"))
    }

    /// A keep-alive connection that asks for /healthz once: the status line's
    /// answer, or nil when kvod closed it without one.
    final class HealthConnection {
        let connection: LoopbackTCPConnection

        init(port: UInt16) throws {
            connection = try LoopbackTCPConnection(port: port)
        }

        func askHealth() -> String? {
            connection.send("GET /healthz HTTP/1.1\r\nHost: kvod\r\n\r\n")
            guard let answer = connection.receive() else { return nil }
            return String(decoding: answer, as: UTF8.self).components(separatedBy: "\r\n").first
        }
    }

    @Test func httpTakesAQuarterOfTheConnectionsAndNoMore() throws {
        let (kvod, base) = try Self.start(arguments: ["--max-connections", "8"])
        guard let port = base.split(separator: ":").last.flatMap({ UInt16($0) }) else { throw TestFailure(base) }
        let first = try HealthConnection(port: port), second = try HealthConnection(port: port)
        #expect(first.askHealth() == "HTTP/1.1 200 OK" && second.askHealth() == "HTTP/1.1 200 OK")
        let third = try HealthConnection(port: port)
        #expect(third.askHealth() == nil)
        // The socket's clients still get in.
        #expect(try LineClient(path: kvod.socketPath).request(#"{"op":"info"}"#).reply["ok"] == true)
        // A connection that closes makes room.
        _ = consume first
        try waitUntil("a new HTTP connection is served", timeout: 10) {
            try HealthConnection(port: port).askHealth() == "HTTP/1.1 200 OK"
        }
        withExtendedLifetime(second) {}
    }

    /// A watch read over HTTP/1.0 (its body not chunked): the status line, then one Server-Sent Event at a time.
    final class EventReader {
        let connection: LoopbackTCPConnection
        private var buffer: [UInt8] = []
        private(set) var statusLine = ""

        init(port: UInt16, target: String, headers: [String]) throws {
            connection = try LoopbackTCPConnection(port: port)
            connection.send((["GET \(target) HTTP/1.0", "Host: kvod"] + headers).joined(separator: "\r\n") + "\r\n\r\n")
            let head = try read(until: Array("\r\n\r\n".utf8))
            statusLine = head.components(separatedBy: "\r\n").first ?? ""
        }

        /// The text up to `separator`, waiting for it (10 s at most).
        private func read(until separator: [UInt8]) throws -> String {
            while true {
                if let range = buffer.firstRange(of: separator) {
                    let text = String(decoding: buffer[..<range.lowerBound], as: UTF8.self)
                    buffer.removeSubrange(..<range.upperBound)
                    return text
                }
                guard let chunk = connection.receive() else {
                    throw TestFailure("the stream ended or said nothing for 10 s; had \(String(decoding: buffer, as: UTF8.self))")
                }
                buffer += chunk
            }
        }

        /// The next event's fields (`id`, `event`, `data`); comments and blocks
        /// without data (`retry:`) are skipped, as a browser does.
        func next() throws -> [String: String] {
            while true {
                var fields: [String: String] = [:]
                for line in try read(until: Array("\n\n".utf8)).split(separator: "\n") where !line.hasPrefix(":") {
                    let parts = line.split(separator: ":", maxSplits: 1)
                    fields[String(parts[0])] = parts.count == 2 ? String(parts[1].dropFirst()) : ""
                }
                if fields["data"] != nil { return fields }
            }
        }
    }

    static func port(of base: String) throws -> UInt16 {
        guard let port = base.split(separator: ":").last.flatMap({ UInt16($0) }) else { throw TestFailure(base) }
        return port
    }

    @Test func aWatchStreamsEventsWithTheirIdsAndGoesOnAfterTheLastEventID() throws {
        let (kvod, base) = try Self.start()
        let port = try Self.port(of: base)
        let auth = "Authorization: Bearer \(Self.token)"
        let watch = try EventReader(port: port, target: "/v1/watch?object=cfg&keyPath=port&keyPath=host", headers: [auth])
        #expect(watch.statusLine == "HTTP/1.1 200 OK")
        let socket = try LineClient(path: kvod.socketPath)
        // Both key paths in one change: one seq, two events.
        _ = try socket.request(#"{"op":"set","object":"cfg","value":{"port":1,"host":"a"}}"#)
        _ = try socket.request(#"{"op":"set","object":"cfg","keyPath":"port","value":2}"#)
        let events = try (0..<3).map { _ in try watch.next() }
        let epoch = try #require(try socket.request(#"{"op":"info"}"#).reply["epoch"]?.stringValue)
        #expect(events.map { $0["id"] } == ["\(epoch):1:1", "\(epoch):1:2", "\(epoch):2:1"])
        #expect(events.allSatisfy { $0["event"] == "change" })
        let last = try JSONReader.parse(events[2]["data"] ?? "")
        #expect(last["new"] == 2 && last["keyPath"] == "port")
        // A browser that reconnects after the first event of seq 1 gets the rest, once.
        let resumed = try EventReader(port: port, target: "/v1/watch?object=cfg&keyPath=port&keyPath=host",
                                      headers: [auth, "Last-Event-ID: \(epoch):1:1"])
        #expect(try (0..<2).map { _ in try resumed.next()["id"] } == ["\(epoch):1:2", "\(epoch):2:1"])
        _ = try socket.request(#"{"op":"set","object":"cfg","keyPath":"host","value":"b"}"#)
        #expect(try resumed.next()["id"] == "\(epoch):3:1")
        // Another history's id cannot be resumed: 410, the socket's compacted.
        let foreign = try Self.call("GET", base + "/v1/watch?object=cfg", headers: ["Last-Event-ID: 00ff:1:1"])
        #expect(foreign.status == 410 && foreign.json?["code"] == "compacted")
        let untold = try Self.call("GET", base + "/v1/watch?object=cfg", token: nil)
        #expect(untold.status == 401)
        let both = try Self.call("GET", base + "/v1/watch?object=cfg&prefix=c")
        #expect(both.status == 400)
    }

    /// The console's files come from the binary without a token, each with its
    /// type and a policy that runs only kvod's own scripts; a watch (and only a
    /// watch) takes the token and resume point as parameters, for `EventSource`.
    @Test func theConsoleIsServedAndAWatchTakesItsTokenFromTheQuery() throws {
        let (kvod, base) = try Self.start()
        let page = try Self.call("GET", base + "/", token: nil)
        #expect(page.status == 200 && page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.body.contains("<script src=\"/console.js\""))
        #expect(page.headers["content-security-policy"]?.contains("script-src 'self'") == true)
        #expect(page.headers["referrer-policy"] == "no-referrer")
        let script = try Self.call("GET", base + "/console.js", token: nil)
        #expect(script.status == 200 && script.headers["content-type"] == "text/javascript; charset=utf-8")
        #expect(script.body.contains("new EventSource("))
        #expect(try Self.call("GET", base + "/console.css", token: nil).status == 200)

        let socket = try LineClient(path: kvod.socketPath)
        _ = try socket.request(#"{"op":"set","object":"cfg","keyPath":"port","value":1}"#)
        let epoch = try #require(try socket.request(#"{"op":"info"}"#).reply["epoch"]?.stringValue)
        _ = try socket.request(#"{"op":"set","object":"cfg","keyPath":"port","value":2}"#)
        let watch = try EventReader(port: try Self.port(of: base),
                                    target: "/v1/watch?object=cfg&keyPath=port&access_token=\(Self.token)&lastEventId=\(epoch):1:1",
                                    headers: [])
        #expect(watch.statusLine == "HTTP/1.1 200 OK")
        #expect(try watch.next()["id"] == "\(epoch):2:1")
        let wrong = try Self.call("GET", base + "/v1/watch?object=cfg&access_token=wrong", token: nil)
        #expect(wrong.status == 401)
        // Elsewhere the parameter is one the resource does not take: refused, before any token is looked at.
        let notAWatch = try Self.call("GET", base + "/v1/objects/cfg?access_token=\(Self.token)", token: nil)
        #expect(notAWatch.status == 400 && notAWatch.body.contains("not access_token"), "\(notAWatch)")
    }

    @Test func aCompactWatchBeginsWithItsObservationAndEndsWithItsConnection() throws {
        let (kvod, base) = try Self.start()
        let watch = try EventReader(port: try Self.port(of: base), target: "/v1/watch?object=c&keyPath=n&compact=true",
                                    headers: ["Authorization: Bearer \(Self.token)"])
        let observed = try watch.next()
        #expect(observed["event"] == "observed" && observed["id"] == nil)
        #expect(try JSONReader.parse(observed["data"] ?? "")["o"] == 1)
        let socket = try LineClient(path: kvod.socketPath)
        #expect(try socket.request(#"{"op":"info"}"#).reply["observations"] == 1)
        _ = try socket.request(#"{"op":"set","object":"c","keyPath":"n","value":7}"#)
        let change = try watch.next()
        #expect(try JSONReader.parse(change["data"] ?? "") == ["o": 1, "new": 7, "seq": 1])
        // The browser goes: so does its observation, once kvod writes to it (an event, a heartbeat).
        _ = consume watch
        try waitUntil("the watch's observation is gone", timeout: 10) {
            _ = try socket.request(#"{"op":"set","object":"c","keyPath":"n","value":8}"#)
            return try socket.request(#"{"op":"info"}"#).reply["observations"] == 0
        }
    }

    @Test func listingBatchesAndMetricsAreTheSocketsOps() throws {
        let (kvod, base) = try Self.start(arguments: ["--http-metrics-open"])
        defer { withExtendedLifetime(kvod) {} }
        let batch = try Self.call("POST", base + "/v1/batch", body: """
            {"ops": [{"op": "set", "object": "svc/a", "keyPath": "up", "value": true},
                     {"op": "set", "object": "svc/b", "keyPath": "up", "value": false},
                     {"op": "add", "object": "count", "keyPath": "n", "by": 2}]}
            """)
        #expect(batch.status == 200 && batch.json?["seqs"] == [1, 2, 3] && batch.json?["values"] == [nil, nil, 2])
        let missed = try Self.call("POST", base + "/v1/batch", body: """
            {"ops":[{"op":"delete","object":"svc/a"},{"op":"set","object":"svc/b","keyPath":"up","value":1,"ifModSeq":9}]}
            """)
        #expect(missed.status == 412 && missed.json?["index"] == 1)
        #expect(try Self.call("GET", base + "/v1/objects/svc%2Fa/up").body == "true\n")
        let firstPage = try Self.call("GET", base + "/v1/objects?prefix=svc/&limit=1")
        #expect(firstPage.json?["objects"] == ["svc/a"] && firstPage.json?["more"] == true)
        let nextPage = try Self.call("GET", base + "/v1/objects?prefix=svc%2F&after=svc/a")
        #expect(nextPage.json?["objects"] == ["svc/b"] && nextPage.json?["more"] == false)
        #expect(try Self.call("GET", base + "/v1/objects?limit=x").status == 400)
        #expect(try Self.call("POST", base + "/v1/batch", body: #"[{"op":"delete","object":"a"}]"#).status == 400)
        let metrics = try Self.call("GET", base + "/metrics", token: nil)
        #expect(metrics.status == 200 && metrics.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(metrics.body.contains("kvod_requests_total{op=\"batch\"} 2"))
    }

    @Test func metricsNeedATokenUnlessOpen() throws {
        let (kvod, base) = try Self.start()
        defer { withExtendedLifetime(kvod) {} }
        #expect(try Self.call("GET", base + "/metrics", token: nil).status == 401)
        #expect(try Self.call("GET", base + "/metrics").body.contains("# HELP"))
    }

    @Test func withACertificateItServesTLSAndRefusesAKeyThatIsNotItsOwn() throws {
        let folder = try TemporaryDirectory.make()
        let openssl = URL(fileURLWithPath: "/usr/bin/openssl")
        for name in ["a", "b"] {
            let made = try CommandRun.run(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                                    "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                                                    "-addext", "subjectAltName=IP:127.0.0.1",
                                                    "-keyout", "\(folder)/\(name).key", "-out", "\(folder)/\(name).pem"])
            #expect(made.status == 0, "\(made.stderr)")
        }
        let (kvod, base) = try Self.start(arguments: ["--http-cert", folder + "/a.pem", "--http-key", folder + "/a.key"])
        #expect(base.hasPrefix("https://"))
        let secure = try CommandRun.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                        ["-s", "--cacert", folder + "/a.pem", "-H", "Authorization: Bearer \(Self.token)",
                                         "-X", "PUT", "--data", "1", base + "/v1/objects/t/v"])
        #expect(secure.status == 0 && secure.stdout == #"{"seq":1}"# + "\n", "\(secure.stderr)")
        let plain = try CommandRun.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                       ["-s", "--max-time", "5", base.replacingOccurrences(of: "https://", with: "http://") + "/healthz"])
        #expect(plain.stdout != "ok\n")
        withExtendedLifetime(kvod) {}
        let mismatched = try KVODProcess(arguments: ["--http", ":0", "--http-cert", folder + "/a.pem", "--http-key", folder + "/b.key"],
                                         waitForSocket: false)
        #expect(try mismatched.waitForExit() == 1)
        #expect(mismatched.stderrText().contains("--http-key"))
    }

    @Test func onlyTheNamedOriginGetsCORSHeaders() throws {
        let origin = "https://console.example.com"
        let (kvod, base) = try Self.start(arguments: ["--http-cors-origin", origin])
        defer { withExtendedLifetime(kvod) {} }
        let preflight = try Self.call("OPTIONS", base + "/v1/objects/a/b", token: nil,
                                      headers: ["Origin: \(origin)", "Access-Control-Request-Method: PUT"])
        #expect(preflight.status == 204 && preflight.headers["access-control-allow-origin"] == origin)
        #expect(preflight.headers["access-control-allow-headers"]?.contains("Authorization") == true)
        let put = try Self.call("PUT", base + "/v1/objects/a/b", body: "1", headers: ["Origin: \(origin)"])
        #expect(put.status == 200 && put.headers["access-control-allow-origin"] == origin)
        #expect(put.headers["access-control-expose-headers"]?.contains("ETag") == true)
        let other = try Self.call("GET", base + "/v1/objects/a/b", headers: ["Origin: https://evil.example"])
        #expect(other.status == 200 && other.headers["access-control-allow-origin"] == nil)
        let otherPreflight = try Self.call("OPTIONS", base + "/v1/objects/a/b", token: nil,
                                           headers: ["Origin: https://evil.example", "Access-Control-Request-Method: PUT"])
        #expect(otherPreflight.status == 405 && otherPreflight.headers["access-control-allow-origin"] == nil)
    }

    @Test func sighupReadsTheTokensAgainAndABrokenFileLeavesThemAsTheyWere() throws {
        let (kvod, base) = try Self.start()
        let tokens = try #require(Self.tokensPath(of: kvod))
        #expect(try Self.call("GET", base + "/v1/info").status == 200)
        try "uid:\(getuid()) \(Self.sha256Hex("second"))\n".write(toFile: tokens, atomically: false, encoding: .utf8)
        kvod.signal(SIGHUP)
        _ = try kvod.waitForLog(containing: "SIGHUP: read 1 HTTP token(s)")
        #expect(try Self.call("GET", base + "/v1/info").status == 401)
        #expect(try Self.call("GET", base + "/v1/info", token: "second").status == 200)
        chmod(tokens, 0o644)
        kvod.signal(SIGHUP)
        _ = try kvod.waitForLog(containing: "not reloaded, the tokens stay as they were")
        #expect(try Self.call("GET", base + "/v1/info", token: "second").status == 200)
        #expect(try kvod.terminate() == 0)
    }

    /// A token that passed is kept to spare its digest next time (HTTPTokenCache):
    /// a token like it (one byte other, one shorter, one longer) is still refused.
    @Test func aTokenThatPassedLetsInOnlyItself() throws {
        let (kvod, base) = try Self.start()
        #expect(try Self.call("GET", base + "/v1/info").status == 200)
        var other = Self.token
        other.removeLast()
        for lookalike in [other + "0", other, Self.token + "0", "K" + Self.token.dropFirst()] {
            #expect(try Self.call("GET", base + "/v1/info", token: lookalike).status == 401, "\(lookalike)")
        }
        #expect(try Self.call("GET", base + "/v1/info").status == 200)
        #expect(try kvod.terminate() == 0)
    }

    /// The tokens file `start` made for `kvod`, from its command line.
    static func tokensPath(of kvod: KVODProcess) -> String? {
        let arguments = kvod.process.arguments
        guard let index = arguments.firstIndex(of: "--http-tokens"), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    @Test func kvoctlMakesATokenAndTheLineThatLetsItIn() throws {
        let kvoctl = KVODProcess.productsDirectory.appendingPathComponent("kvoctl")
        let made = try CommandRun.run(kvoctl, ["token", "new", "uid:\(getuid())"])
        #expect(made.status == 0 && made.lines.count == 2, "\(made.stderr)")
        let token = made.lines[0], line = made.lines[1]
        #expect(token.count == 43 && token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(line == "uid:\(getuid()) \(try Self.sha256Hex(token))")
        let other = try CommandRun.run(kvoctl, ["token", "new", "uid:\(getuid())"])
        #expect(other.lines.first != token)
        let folder = try TemporaryDirectory.make()
        try (line + "\n").write(toFile: folder + "/tokens", atomically: true, encoding: .utf8)
        chmod(folder + "/tokens", 0o600)
        let kvod = try KVODProcess(arguments: ["--http", "127.0.0.1:0", "--http-tokens", folder + "/tokens", "--http-allow-root-token"])
        let logged = try kvod.waitForLog(containing: "serving HTTP on ")
        let base = String(logged[logged.range(of: "http://")!.lowerBound...])
        #expect(try Self.call("GET", base + "/v1/info", token: token).status == 200)
        #expect(try CommandRun.run(kvoctl, ["token", "new", "someone"]).status == 2)
    }

    @Test func eachGroupTokenHasAConnectionLimitOfItsOwn() throws {
        let folder = try TemporaryDirectory.make()
        try "gid:100 \(try Self.sha256Hex("staff"))\ngid:200 \(try Self.sha256Hex("ops"))\n"
            .write(toFile: folder + "/tokens", atomically: true, encoding: .utf8)
        chmod(folder + "/tokens", 0o600)
        let kvod = try KVODProcess(arguments: ["--http", "127.0.0.1:0", "--http-tokens", folder + "/tokens",
                                               "--max-connections-per-uid", "1"])
        let logged = try kvod.waitForLog(containing: "serving HTTP on ")
        let base = String(logged[logged.range(of: "http://")!.lowerBound...])
        // A watch holds the one connection gid 100 may have.
        let watch = try EventReader(port: try Self.port(of: base), target: "/v1/watch?object=o",
                                    headers: ["Authorization: Bearer staff"])
        #expect(watch.statusLine == "HTTP/1.1 200 OK")
        #expect(try Self.call("GET", base + "/v1/info", token: "staff").status == 429)
        #expect(try Self.call("GET", base + "/v1/info", token: "ops").status == 200)
        withExtendedLifetime(watch) {}
    }
}
