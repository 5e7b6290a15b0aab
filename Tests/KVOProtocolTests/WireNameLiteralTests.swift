import Foundation
import KVOProtocol
import Testing

/// No member name of a reply, an event or a page is spelled as a string
/// literal outside KVOProtocol: the engine, the daemon, KVOClient and kvoctl
/// write them through ``Field``, ``InfoFigure``, ``LineFragment`` and
/// ``ErrorCode``, so a name is changed or added in one place.
///
/// The rule, per line of each `.swift` file under `Sources/` (comments
/// skipped), outside `Sources/KVOProtocol` (where names are spelled), the
/// tools that talk to kvod as an outside client would (``toolTargets``) and
/// KVOEtcd (etcd's JSON, not kvod's). A line fails when it has:
/// 1. a reply field named by a literal: `field("…"` (`ReplyEncoder.field`
///    takes a ``Field``; this catches a `StaticString` overload coming back);
/// 2. a literal that is a JSON fragment made of protocol names, as the hot
///    paths append: `#","keyPath":"#`, `"{\"seq\":"`, `#","compact":true,"o":"#`,
///    only quoted names, `:`, `,`, `{`, `[` and constants (prose, such as help
///    texts and messages, has spaces and other words, and never matches);
/// 3. a protocol name as the key of a JSON object being built: a dictionary
///    literal's `"seq": …` (a space after the colon, as Swift code has and
///    JSON examples in help texts have not) or a subscript set, `details["seq"] =`.
///
/// Protocol names here are the raw values of ``Field`` and ``InfoFigure``'s
/// sets. Files that write JSON of kvod's own with names that happen to be
/// protocol names (the records kvod keeps in etcd) are listed in
/// ``otherFormats`` with why; reading a reply (`reply["seq"]`) is not writing.
@Suite struct WireNameLiteralTests {
    /// Targets that are clients, benchmarks or fuzzers of kvod: they spell
    /// requests and read replies as any client may.
    static let toolTargets: Set<String> = [
        "KVOProtocol", "KVOEtcd", "KVOFuzzing", "kvod-bench", "kvod-bench-observer", "kvod-client-rate",
        "kvod-decode-profile", "kvod-fuzz",
    ]

    /// Files whose JSON is not the client protocol, with why.
    static let otherFormats: [String: String] = [
        "Sources/KVOEngine/Replication/ReplicatedChange.swift": "a change as kvod stores it in etcd",
        "Sources/KVOEngine/Replication/ReplicatedBatch.swift": "a batch as kvod stores it in etcd",
        "Sources/KVOEngine/Replication/ChangeContext.swift": "who made a change and its lifetime, as stored in etcd",
        "Sources/KVOCluster/ClusterKeys+Lifetimes.swift": "a lease release as kvod stores it in etcd",
    ]

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let protocolNames: Set<String> = Set(
        Field.allCases.map(\.rawValue) + InfoFigure.Memory.allCases.map(\.rawValue)
            + InfoFigure.Refused.allCases.map(\.rawValue) + InfoFigure.Storage.allCases.map(\.rawValue)
            + InfoFigure.Cluster.allCases.map(\.rawValue))

    /// Every offending line, as `path:line: text`.
    static func offences(inFile path: String, text: String) -> [String] {
        var found: [String] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let code = line.trimmingCharacters(in: .whitespaces)
            if code.hasPrefix("//") { continue }
            if offends(code) { found.append("\(path):\(number + 1): \(code)") }
        }
        return found
    }

    /// Whether one line of code breaks one of the three rules.
    static func offends(_ line: String) -> Bool {
        // Every rule needs a quote: most lines are spared the regexes.
        guard line.contains("\"") else { return false }
        // 1. A reply field named by a literal.
        if line.contains(#/(?:^|[^A-Za-z0-9_])field\(\s*#?"/#) { return true }
        // 2. A literal JSON fragment of protocol names.
        for literal in literals(in: line) where isFragment(literal) { return true }
        // 3. A protocol name as a key of a JSON object being built.
        for match in line.matches(of: #/(?:^|[\[(,])\s*"([A-Za-z]+)"\s*:\s+\S/#)
        where protocolNames.contains(String(match.1)) {
            return true
        }
        for match in line.matches(of: #/\[\s*"([A-Za-z]+)"\s*\]\s*=[^=]/#) where protocolNames.contains(String(match.1)) {
            return true
        }
        return false
    }

    /// The text of each string literal on the line, `\"` unescaped: raw ones
    /// (`#"…"#`) and plain ones.
    static func literals(in line: String) -> [String] {
        var texts = line.matches(of: #/#"(.*?)"#/#).map { String($0.1) }
        let plain = line.replacing(#/#"(.*?)"#/#, with: "")
        texts += plain.matches(of: #/"((?:[^"\\]|\\.)*)"/#).map { String($0.1).replacing("\\\"", with: "\"") }
        return texts
    }

    /// Whether `text` is nothing but JSON punctuation, quoted names (one of
    /// them the protocol's) and constants: a piece of a reply or event line.
    static func isFragment(_ text: String) -> Bool {
        let member = #/"([A-Za-z]+)":(?:true|false|null|-?[0-9]+|"[A-Za-z_]+")?/#
        guard text.wholeMatch(of: #/[{\[,]*(?:"[A-Za-z]+":(?:true|false|null|-?[0-9]+|"[A-Za-z_]+")?[{\[,]*)+/#) != nil
        else { return false }
        return text.matches(of: member).contains { protocolNames.contains(String($0.1)) }
    }

    @Test func noProtocolNameIsALiteralOutsideKVOProtocol() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var offences: [String] = []
        var scanned = 0
        for case let url as URL in files where url.pathExtension == "swift" {
            let path = String(url.path.dropFirst(Self.root.path.count + 1))
            let target = path.split(separator: "/").dropFirst().first.map(String.init) ?? ""
            if Self.toolTargets.contains(target) || Self.otherFormats[path] != nil { continue }
            scanned += 1
            offences += Self.offences(inFile: path, text: try String(contentsOf: url, encoding: .utf8))
        }
        #expect(scanned > 200, "only \(scanned) files scanned under \(sources.path)")
        #expect(offences.isEmpty, "protocol names spelled outside KVOProtocol:\n\(offences.joined(separator: "\n"))")
    }

    @Test func theRuleCatchesEachWayOfWritingANameAndSparesProse() {
        let caught = [
            ##"reply.field("value", .bool(true))"##,
            ##"bytes.append(literal: #","epoch":"#)"##,
            ##"bytes.append(contentsOf: #","compact":true,"o":"#.utf8)"##,
            ##"bytes += "{\"seq\":".utf8"##,
            ##"let counts: JSONObject = ["seq": .number(n), "observers": .number(m)]"##,
            ##"    "historyChanges": Self.number(history.count),"##,
            ##"details["modSeq"] = 0"##,
        ]
        for line in caught { #expect(Self.offends(line), "not caught: \(line)") }
        let spared = [
            ##"throw .badRequest("field \"awaitTimeout\" needs \"await\"")"##,
            ##"--ack) has acted on the change, and prints {"seq":S,"observers":N,"acknowledged":M}; when \"##,
            ##"Example: echo '{"op":"get","object":"person/1"}' | kvoctl raw"##,
            ##"let seq = reply["seq"]"##,
            ##"var report: JSONObject = ["file": .string(file)]"##,
            ##"bytes += #"{"r":"#.utf8"##,
            ##"let x = flag ? "seq" : "value""##,
        ]
        for line in spared { #expect(!Self.offends(line), "a false positive: \(line)") }
    }
}
