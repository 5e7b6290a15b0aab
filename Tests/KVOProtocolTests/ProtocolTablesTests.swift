import Foundation
import KVOProtocol
import Testing

/// The names in KVOProtocol are docs/PROTOCOL.md's: its tables of error codes
/// and ops list exactly the cases of ``ErrorCode`` and ``Op``, so a code or op
/// added to one and not the other fails here.
@Suite struct ProtocolTablesTests {
    static let protocolText: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)) ?? ""
    }()

    /// The first column's backticked names of the table under `heading`.
    static func tableNames(under heading: String, firstColumn: String) -> [String] {
        let lines = protocolText.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: Substring(heading)),
              let header = lines[start...].firstIndex(where: { $0.hasPrefix("| \(firstColumn) |") }) else { return [] }
        return lines[(header + 2)...].prefix { $0.hasPrefix("|") }.compactMap { row in
            let cell = row.split(separator: "|").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard cell.hasPrefix("`"), cell.hasSuffix("`"), cell.count > 2 else { return nil }
            return String(cell.dropFirst().dropLast())
        }
    }

    @Test func everyErrorCodeInTheDocumentsTableIsAnErrorCodeAndNoOther() {
        let documented = Self.tableNames(under: "## Errors", firstColumn: "code")
        #expect(documented.count >= 13, "\(documented.count) codes found in PROTOCOL.md's Errors table")
        #expect(Set(documented) == Set(ErrorCode.allCases.map(\.rawValue)))
        #expect(documented.count == Set(documented).count, "a code is listed twice")
    }

    @Test func everyOpInTheDocumentsTableIsAnOpAndNoOther() {
        let documented = Self.tableNames(under: "## Operations", firstColumn: "op")
        #expect(documented.count >= 16, "\(documented.count) ops found in PROTOCOL.md's Operations table")
        #expect(Set(documented) == Set(Op.allCases.map(\.rawValue)))
    }

    @Test func everyEventKindAndCauseIsSpelledInTheDocument() {
        for name in EventKind.allCases.map(\.rawValue) + EventCause.allCases.map(\.rawValue) {
            #expect(protocolText(contains: "`\(name)`"), "PROTOCOL.md never names \(name)")
        }
        #expect(Self.protocolText.contains(#""event":"change""#))
    }

    @Test func everyFieldIsSpelledInTheDocument() {
        for field in Field.allCases {
            #expect(protocolText(contains: "`\(field.rawValue)`") || protocolText(contains: "\"\(field.rawValue)\""),
                    "PROTOCOL.md never names the field \(field.rawValue)")
        }
    }

    private func protocolText(contains text: String) -> Bool { Self.protocolText.contains(text) }
}
