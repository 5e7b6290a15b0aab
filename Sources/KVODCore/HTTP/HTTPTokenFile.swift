/// `--http-tokens`' file (docs/HTTP.md, "Tokens"): one token per line,
/// `SUBJECT SHA256HEX`, the subject a token acts as and the hex SHA-256 of the
/// token, so the file holds no secret. `#` starts a comment; blank lines are skipped.
public enum HTTPTokenFile {
    /// Who a token acts as: what `--policy` knows.
    public enum Subject: Equatable, Sendable, CustomStringConvertible {
        case uid(UInt32)
        case gid(UInt32)
        case user(String)
        case group(String)

        public var description: String {
            switch self {
            case .uid(let uid): "uid:\(uid)"
            case .gid(let gid): "gid:\(gid)"
            case .user(let name): "user:\(name)"
            case .group(let name): "group:\(name)"
            }
        }

        init?(_ text: Substring) {
            let parts = text.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, !parts[1].isEmpty else { return nil }
            switch parts[0] {
            case "uid": guard let id = UInt32(parts[1]) else { return nil }; self = .uid(id)
            case "gid": guard let id = UInt32(parts[1]) else { return nil }; self = .gid(id)
            case "user": self = .user(String(parts[1]))
            case "group": self = .group(String(parts[1]))
            default: return nil
            }
        }
    }

    public struct Entry: Equatable, Sendable {
        public let subject: Subject
        /// The token's SHA-256, lower-case hex.
        public let digest: String
    }

    public struct Problem: Error, Equatable, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// The file's entries; a line that is not one is refused with its number.
    public static func parse(_ text: String) throws(Problem) -> [Entry] {
        var entries: [Entry] = []
        var digests: Set<String> = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.prefix { $0 != "#" }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            if fields.isEmpty { continue }
            let where_ = "line \(index + 1)"
            guard fields.count == 2 else {
                throw Problem(description: "\(where_): expected SUBJECT SHA256HEX, found \(fields.count) fields")
            }
            guard let subject = Subject(fields[0]) else {
                throw Problem(description: "\(where_): the subject must be uid:N, gid:N, user:NAME or group:NAME: \(fields[0])")
            }
            let digest = fields[1].lowercased()
            guard digest.count == 64, digest.allSatisfy(\.isHexDigit) else {
                throw Problem(description: "\(where_): a token's SHA-256 is 64 hex digits (sha256sum prints it)")
            }
            guard digests.insert(digest).inserted else {
                throw Problem(description: "\(where_): this token's SHA-256 is on an earlier line too")
            }
            entries.append(Entry(subject: subject, digest: digest))
        }
        return entries
    }
}
