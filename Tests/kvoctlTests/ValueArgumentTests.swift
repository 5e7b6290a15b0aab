import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// Values on kvoctl's command line: negative numbers, `--`, words that look
/// like JSON, `--string` and `--json-file`, against the real kvod.
@Suite(.onDedicatedThread) struct ValueArgumentTests {
    /// kvoctl with `--socket` first, so that `--` can end the line's options.
    func kvoctl(_ kvod: KVODProcess, _ arguments: [String], stdin: String? = nil) async throws -> CommandRun {
        try await KVOCtl.run(["--socket", kvod.socketPath] + arguments, stdin: stdin)
    }

    @Test func negativeNumbersAreValuesAndDoubleDashEndsTheOptions() async throws {
        let kvod = try await KVODProcess()
        #expect(try await kvoctl(kvod, ["set", "x", "y", "-5"]).status == 0)
        #expect(try await kvoctl(kvod, ["insert", "x", "list", "-1", "-2.5e3", "-0"]).status == 0)
        #expect(try await kvoctl(kvod, ["replace", "x", "list", "0", "-7"]).status == 0)
        #expect(try await kvoctl(kvod, ["set", "x", "z", "--if-value", "-5", "--", "--socket"]).status == 5,
                "--if-value takes -5; x.z has no value, so the condition fails")
        #expect(try await kvoctl(kvod, ["set", "x", "z", "--", "--socket"]).status == 0)
        #expect(try await kvoctl(kvod, ["set", "--string", "x", "w", "--", "-rf"]).status == 0)
        #expect(try await kvoctl(kvod, ["delete", "x", "y", "--if-value", "-5"]).stdout == "6\n")
        #expect(try await kvoctl(kvod, ["get", "x"]).stdout == #"{"list":[-7,-2.5e3,-0],"z":"--socket","w":"-rf"}"# + "\n")

        let option = try await kvoctl(kvod, ["set", "x", "y", "-rf"])
        #expect(option.status == 2 && option.stderr.contains("Unknown option '-rf'") && option.stderr.contains("--"),
                "\(option)")
    }

    @Test func wordsThatLookLikeJSONButAreNotAreUsageErrorsThatSayToQuoteOrUseString() async throws {
        let kvod = try await KVODProcess()
        for word in ["1e400", "True", "NaN", "01", "+1", "-01", "NULL", "-Infinity", "0x1F", "1."] {
            for arguments in [["set", "o", "k", word], ["insert", "o", "list", word], ["replace", "o", "list", "0", word],
                              ["set", "o", "k", "1", "--if-value", word]] {
                let run = try await kvoctl(kvod, arguments)
                #expect(run.status == 2, "\(arguments): \(run)")
                #expect(run.stderr.contains("VALUE \(word) looks like JSON but is not") && run.stderr.contains("--string"),
                        "\(arguments): \(run.stderr)")
            }
        }
        #expect(try await kvoctl(kvod, ["info"]).stdout.contains(#""seq":0"#), "nothing was sent")
        for text in ["xsc", "hello world", "2024-01-31", "1.2.3", "-", "e5"] {
            #expect(try await kvoctl(kvod, ["set", "o", "k", "--", text]).status == 0, "\(text)")
            #expect(try await kvoctl(kvod, ["get", "o", "k"]).stdout == "\"\(text)\"\n", "a word stays a string")
        }
    }

    @Test func stringTakesEveryValueVerbatim() async throws {
        let kvod = try await KVODProcess()
        #expect(try await kvoctl(kvod, ["set", "--string", "o", "k", "1e400"]).status == 0)
        #expect(try await kvoctl(kvod, ["insert", "--string", "o", "list", "42", "True", #"{"a":1}"#]).status == 0)
        #expect(try await kvoctl(kvod, ["replace", "o", "list", "1", "NaN", "--string"]).status == 0)
        #expect(try await kvoctl(kvod, ["get", "o"]).stdout == #"{"k":"1e400","list":["42","NaN","{\"a\":1}"]}"# + "\n")
        let document = try await kvoctl(kvod, ["set", "--string", "o", #"{"a":1}"#])
        #expect(document.status == 2 && document.stderr.contains("must be a JSON object"), "\(document)")
    }

    @Test func jsonFileReadsTheValueFromAFileOrStandardInput() async throws {
        let kvod = try await KVODProcess()
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/value.json"
        try #"{"name": "xsc", "tags": ["a", "b"]}"#.appending("\n").write(toFile: file, atomically: true, encoding: .utf8)

        #expect(try await kvoctl(kvod, ["set", "person/1", "--json-file", file]).status == 0, "the whole document")
        #expect(try await kvoctl(kvod, ["set", "person/1", "age", "--json-file", "-"], stdin: "-42\n").status == 0)
        #expect(try await kvoctl(kvod, ["insert", "person/1", "tags", "--json-file", "-", "--index", "0"],
                                 stdin: #""z""#).status == 0)
        #expect(try await kvoctl(kvod, ["replace", "person/1", "tags", "2", "--json-file", "-"], stdin: "[1]").status == 0)
        #expect(try await kvoctl(kvod, ["get", "person/1"]).stdout
            == #"{"name":"xsc","tags":["z","a",[1]],"age":-42}"# + "\n")

        let failures: [([String], String?, String)] = [
            (["set", "o", "k", "--json-file", directory + "/none.json"], nil, "No such file or directory"),
            (["set", "o", "k", "--json-file", "-"], "{broken", "does not hold one JSON value"),
            (["set", "o", "k", "--json-file", "-"], "1 2", "does not hold one JSON value"),
            (["set", "o", "--json-file", "-"], "[1]", "must be a JSON object"),
            (["set", "o", "k", "v", "--json-file", file], nil, "with --json-file"),
            (["set", "o", "k", "--json-file", file, "--string"], nil, "exclude each other"),
            (["insert", "o", "k", "1", "--json-file", file], nil, "with --json-file"),
            (["replace", "o", "k", "0", "1", "--json-file", file], nil, "with --json-file"),
        ]
        for (arguments, stdin, complaint) in failures {
            let run = try await kvoctl(kvod, arguments, stdin: stdin)
            #expect(run.status == 2 && run.stderr.contains(complaint), "\(arguments): \(run)")
        }
        #expect(try await kvoctl(kvod, ["info"]).stdout.contains(#""seq":4"#), "the failures changed nothing")
    }
}
