import ArgumentParser
import CSHA256
import Foundation

/// `kvoctl token new SUBJECT`: a token for kvod's HTTP API and the line that
/// lets it in (docs/HTTP.md, "Tokens"). Runs without kvod.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Make tokens for kvod's HTTP API (--http-tokens).",
        subcommands: [NewToken.self])
}

struct NewToken: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new", abstract: "Print a new token, then its line for --http-tokens' file.",
        discussion: """
            The token (32 random bytes, base64url) goes to the client, which sends it as \
            Authorization: Bearer TOKEN; the line (SUBJECT and the token's SHA-256) goes into the file \
            kvod reads, which so holds no secret. SIGHUP makes kvod read the file again.
            """)

    @Argument(help: "Whom the token acts as: uid:N, gid:N, user:NAME or group:NAME.")
    var subject: String

    func validate() throws {
        let parts = subject.split(separator: ":", maxSplits: 1)
        let named: Bool = switch parts.first {
        case "uid", "gid": parts.count == 2 && UInt32(parts[1]) != nil
        case "user", "group": parts.count == 2 && !parts[1].contains(where: \.isWhitespace)
        default: false
        }
        guard named else { throw ValidationError("the subject is uid:N, gid:N, user:NAME or group:NAME, not \(subject)") }
    }

    func run() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let token = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        let digest = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 65) { hex in
            Array(token.utf8).withUnsafeBytes { kvod_sha256_hex($0.baseAddress, $0.count, hex.baseAddress) }
            return String(cString: hex.baseAddress!)
        }
        Output.line(token)
        Output.line("\(subject) \(digest)")
    }
}
