import Foundation
import KVOTestSupport
import Testing

/// Every kvod option can be set from a `KVOD_<OPTION>` variable (containers,
/// `/etc/default/kvod`); the command line wins, and a bad value is refused
/// with a message naming the variable.
@Suite(.onDedicatedThread) struct EnvironmentOptionsTests {
    /// The oldest seq still held after five sets, and how many changes are held.
    private static func historyAfterFiveSets(arguments: [String] = [], environment: [String: String]) throws
        -> (oldest: Int?, held: Int?) {
        let kvod = try KVODProcess(arguments: arguments, environment: environment)
        let client = try LineClient(path: kvod.socketPath)
        for index in 1...5 { _ = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":\#(index)}"#) }
        let info = try client.request(#"{"op":"info"}"#).reply
        try kvod.terminate()
        return (info["oldestSeq"]?.intValue, info["historyChanges"]?.intValue)
    }

    @Test func kvodHistoryFromTheEnvironmentBoundsTheHistory() throws {
        let history = try Self.historyAfterFiveSets(environment: ["KVOD_HISTORY": "2"])
        #expect(history.held == 2)
        #expect(history.oldest == 4)
    }

    @Test func anOptionOnTheCommandLineWinsOverItsVariable() throws {
        let history = try Self.historyAfterFiveSets(arguments: ["--history", "3"], environment: ["KVOD_HISTORY": "2"])
        #expect(history.held == 3)
        #expect(history.oldest == 3)
    }

    /// Issue 34 item 8: a misspelt variable was ignored without a word.
    @Test func anUnknownKvodVariableIsWarnedOfAndKnownOnesAreNot() throws {
        let kvod = try KVODProcess(environment: ["KVOD_HISTROY": "5", "KVOD_HISTORY": "7", "KVOD_OPTIONS": "-v"])
        let line = try kvod.waitForLog(containing: "KVOD_HISTROY")
        #expect(line.contains("no option has that variable"), "\(line)")
        let client = try LineClient(path: kvod.socketPath)
        #expect(try client.request(#"{"op":"ping"}"#).reply["ok"] == true)
        try kvod.terminate()
        #expect(!kvod.stderrText().contains("KVOD_HISTORY is set"), "\(kvod.stderrText())")
        #expect(!kvod.stderrText().contains("KVOD_OPTIONS is set"))
    }

    @Test func anEmptyVariableCountsAsUnset() throws {
        let history = try Self.historyAfterFiveSets(environment: ["KVOD_HISTORY": "", "KVOD_DATA_DIR": ""])
        #expect(history.held == 5)
    }

    @Test(arguments: [
        ("KVOD_HISTORY", "lots"), ("KVOD_HISTORY", "20000000"), ("KVOD_LOG_LEVEL", "loud"), ("KVOD_SYNC", "sometimes"),
        ("KVOD_ETCD_MAX_TXN_OPS", "1"), ("KVOD_ETCD_MAX_REQUEST_BYTES", "0"),
    ])
    func aBadValueIsRefusedWithAMessageNamingItsVariable(variable: String, value: String) throws {
        // Should the value be taken, kvod would listen there until the timeout (not litter /).
        let folder = try TemporaryDirectory()
        let run = try CommandRun.run(KVODProcess.binaryURL, ["--socket", folder.path + "/kvod.sock"],
                                     environment: [variable: value], timeout: 10)
        #expect(run.status == 64)
        #expect(run.stderr.hasPrefix("kvod: \(variable)=\(value): "), "\(run.stderr)")
    }

    @Test func aFlagsVariableIsOneOrTrueOrZeroOrFalse() throws {
        let folder = try TemporaryDirectory()
        let beyondLoopback = ["--socket", folder.path + "/kvod.sock", "--http", "0.0.0.0:0"]
        let unset = try CommandRun.run(KVODProcess.binaryURL, beyondLoopback, environment: ["KVOD_HTTP_INSECURE": "0"], timeout: 10)
        #expect(unset.status == 64 && unset.stderr.contains("or --http-insecure"), "\(unset.stderr)")
        let odd = try CommandRun.run(KVODProcess.binaryURL, beyondLoopback, environment: ["KVOD_HTTP_INSECURE": "maybe"], timeout: 10)
        #expect(odd.status == 64 && odd.stderr.hasPrefix("kvod: KVOD_HTTP_INSECURE=maybe: "), "\(odd.stderr)")
        let kvod = try KVODProcess(arguments: ["--http", "0.0.0.0:0"], environment: ["KVOD_HTTP_INSECURE": "true"])
        #expect(try kvod.waitForLog(containing: "serving HTTP on http://0.0.0.0:").contains("0.0.0.0"))
    }

    @Test func helpNamesTheVariableOfEveryOption() throws {
        let run = try CommandRun.run(KVODProcess.binaryURL, ["--help"])
        #expect(run.status == 0)
        // The options listed under OPTIONS, as "  --name <value>".
        let options = run.lines.compactMap { line -> String? in
            let words = line.split(separator: " ")
            guard let first = words.first, first.hasPrefix("--"), line.hasPrefix("  ") else { return nil }
            return String(first.dropFirst(2).split(separator: ",").first ?? "")
        }
        #expect(options.count > 10, "\(run.stdout)")
        let help = run.stdout.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
        for option in options where !["socket", "restore", "help", "version"].contains(option) {
            let variable = "KVOD_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
            #expect(help.contains("\(variable) (--\(option))"), "--help does not name \(variable)")
        }
    }
}
