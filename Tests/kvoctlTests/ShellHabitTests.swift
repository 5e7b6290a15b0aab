import Foundation
import KVOTestSupport
import Testing

/// What a shell user brings from redis-cli and etcdctl: `--raw` values,
/// durations with units on every option, and a word for a mistyped command.
@Suite(.onDedicatedThread) struct ShellHabitTests {
    @Test func getRawPrintsAStringWithoutQuotesAndOtherValuesAsJSON() async throws {
        let kvod = try await KVODProcess()
        _ = try await KVOCtl.run(kvod, ["set", "app/cfg", #"{"name":"web1","tab":"a\tb \"q\"","port":8080,"on":true,"n":null,"list":["x",1],"o":{"a":"b"}}"#])
        for (keyPath, raw) in [("name", "web1"), ("tab", "a\tb \"q\""), ("port", "8080"), ("on", "true"),
                               ("n", "null"), ("list", #"["x",1]"#), ("o", #"{"a":"b"}"#)] {
            let run = try await KVOCtl.run(kvod, ["get", "--raw", "app/cfg", keyPath])
            #expect(run.status == 0 && run.stdout == raw + "\n", "\(keyPath): \(run)")
        }
        let json = try await KVOCtl.run(kvod, ["get", "app/cfg", "name"])
        #expect(json.stdout == "\"web1\"\n", "without --raw, JSON as before: \(json)")
        let versioned = try await KVOCtl.run(kvod, ["get", "--raw", "--mod-seq", "app/cfg", "name"])
        #expect(versioned.stdout == "1 web1\n", "\(versioned)")
    }

    @Test func observeRawPrintsEachNewValueOnALine() async throws {
        let kvod = try await KVODProcess()
        _ = try await KVOCtl.run(kvod, ["set", "config/web", "version", "v1"])
        let observer = try RecipeTests.background(kvod, ["observe", "config/web", "version", "--raw", "--initial",
                                                         "--count", "4", "--timeout", "20s"])
        try await waitUntil("the observer has its initial line", timeout: 10) { () async -> Bool in
            observer.linesSoFar.contains("v1")
        }
        for value in ["v2", "3"] { _ = try await KVOCtl.run(kvod, ["set", "config/web", "version", value]) }
        _ = try await KVOCtl.run(kvod, ["delete", "config/web", "version"])
        let run = try await observer.wait()
        #expect(run.status == 0 && run.lines == ["v1", "v2", "3", "null"], "\(run)")
        let conflicting = try await KVOCtl.run(kvod, ["observe", "config/web", "version", "--raw", "--old"])
        #expect(conflicting.status == 2, "\(conflicting)")
    }

    @Test func everyDurationOptionTakesUnitsAndBareSeconds() async throws {
        let kvod = try await KVODProcess()
        for ttl in ["2s", "1500ms", "1m", "1h", "2", "0.5"] {
            let run = try await KVOCtl.run(kvod, ["set", "--ttl", ttl, "s", "k", "1"])
            #expect(run.status == 0, "--ttl \(ttl): \(run)")
        }
        for bad in ["0", "0s", "-1", "8761h", "31536001", "soon", "2d"] {
            let run = try await KVOCtl.run(kvod, ["set", "--ttl", bad, "s", "k", "1"])
            #expect(run.status == 2 && run.stderr.contains("--ttl"), "--ttl \(bad): \(run)")
        }
        // The value goes within its 1500 ms.
        _ = try await KVOCtl.run(kvod, ["set", "--ttl", "300ms", "brief", "k", "1"])
        try await waitUntil("a 300ms ttl passes", timeout: 10) { () async -> Bool in
            (try? await KVOCtl.run(kvod, ["get", "brief", "k"]).status) == 8
        }
        let observe = try await KVOCtl.run(kvod, ["observe", "o", "k", "--timeout", "200ms", "--throttle", "0.1"])
        #expect(observe.status == 0, "\(observe)")
        let awaited = try await KVOCtl.run(kvod, ["set", "--await", "written", "--timeout", "2s", "o", "k", "1",
                                                "--request-timeout", "1m"])
        #expect(awaited.status == 0, "\(awaited)")
    }

    @Test func anUnknownCommandIsNamedWithTheLikeliestOne() async throws {
        for (arguments, message) in [
            (["gte", "app/cfg", "name"], "kvoctl: unknown command 'gte'; did you mean 'get'? (kvoctl --help lists them)"),
            (["--socket", "/tmp/x.sock", "obsrve", "o"], "kvoctl: unknown command 'obsrve'; did you mean 'observe'?"),
            (["--quiet", "lis"], "kvoctl: unknown command 'lis'; did you mean 'list'?"),
            (["frobnicate", "o"], "kvoctl: unknown command 'frobnicate' (kvoctl --help lists them)"),
        ] {
            let run = try await KVOCtl.run(arguments)
            #expect(run.status == 2 && run.stderr.hasPrefix(message) && run.stderr.filter { $0 == "\n" }.count == 1,
                    "\(arguments): \(run)")
        }
        let known = try await KVOCtl.run(["get"])
        #expect(known.status == 2 && known.stderr.contains("Missing expected argument"), "\(known)")
    }
}
