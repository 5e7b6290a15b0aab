import KVODCore
import KVOEngine

#if canImport(Glibc)
import Glibc
#endif

/// The tokens of `--http-tokens` (``HTTPTokenFile``), each resolved to the
/// credentials it acts with: what the access policy and the per-uid limits see,
/// as for a socket client's peer credentials. Loaded at start.
struct HTTPTokens {
    /// A token's SHA-256 (lower-case hex) to who it acts as.
    private var credentialsByDigest: [String: HTTPTokenCache.Caller] = [:]
    /// The tokens that passed last: a reloaded file starts without them.
    private var recent = HTTPTokenCache()

    /// The uid of no user (`/metrics` without a token).
    static let noUser = UInt32.max

    /// The uid a `gid:`/`group:` token acts with: no user's (uids of users stay
    /// below 2^31), one per group, so that each group subject has a
    /// `--max-connections-per-uid` of its own.
    static func groupSubjectUID(_ gid: UInt32) -> UInt32 { 0x8000_0000 | (gid & 0x7FFF_FFFF) }

    /// Reads `path`: it must be a regular file that only its owner may read or
    /// write (0600 or stricter), every subject known to this machine, and a
    /// `uid:0` token only with `allowRoot`.
    init(path: String, allowRoot: Bool) throws(HTTPTokenFile.Problem) {
        let text = try Self.readPrivateFile(path)
        for entry in try HTTPTokenFile.parse(text) {
            let credentials = try Self.credentials(of: entry.subject)
            if credentials.uid == 0, !allowRoot {
                throw HTTPTokenFile.Problem(description: "\(path): a token acting as root (\(entry.subject)) needs --http-allow-root-token")
            }
            credentialsByDigest[entry.digest] = (entry.subject.description, credentials)
        }
    }

    var count: Int { credentialsByDigest.count }

    private static let bearer = Array("bearer".utf8)

    /// Who `authorization` (an `Authorization` header's value) acts as, or nil
    /// when it is not `Bearer` and a token of the file. A token that passed
    /// recently is found in ``recent`` without its digest.
    mutating func subject(authorization: String) -> HTTPTokenCache.Caller? {
        // Read as bytes: no Characters, no lowercased copy.
        let utf8 = authorization.utf8
        guard let space = utf8.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        let scheme = utf8[..<space]
        // `| 0x20` lowers an ASCII letter and matches no other byte to one.
        let isBearer = scheme.withContiguousStorageIfAvailable { scheme in
            scheme.count == 6 && zip(scheme, Self.bearer).allSatisfy { $0 | 0x20 == $1 }
        }
        guard isBearer == true else { return nil }
        let token = utf8[utf8.index(after: space)...].drop { $0 == UInt8(ascii: " ") }
        guard !token.isEmpty else { return nil }
        if let caller = recent.caller(of: token) { return caller }
        guard let caller = credentialsByDigest[TokenDigest.hex(of: token)] else { return nil }
        recent.remember(token, as: caller)
        return caller
    }

    private static func readPrivateFile(_ path: String) throws(HTTPTokenFile.Problem) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw HTTPTokenFile.Problem(description: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw HTTPTokenFile.Problem(description: "\(path) is not a regular file") }
        guard info.st_mode & 0o077 == 0 else {
            throw HTTPTokenFile.Problem(description: """
                \(path) may be read or written by others (mode \(String(info.st_mode & 0o777, radix: 8))): \
                chmod 600 it, as a file of secrets' digests must be
                """)
        }
        guard let file = fopen(path, "r") else {
            throw HTTPTokenFile.Problem(description: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count == 0 { break }
            bytes += chunk[..<count]
            guard bytes.count <= 1 << 20 else { throw HTTPTokenFile.Problem(description: "\(path) is over 1 MiB") }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw HTTPTokenFile.Problem(description: "\(path) is not UTF-8 text")
        }
        return text
    }

    private static func credentials(of subject: HTTPTokenFile.Subject) throws(HTTPTokenFile.Problem) -> PeerCredentials {
        switch subject {
        case .uid(let uid):
            guard let user = UserRecord(uid: uid) else { return PeerCredentials(pid: 0, uid: uid, gid: noUser) }
            return user.credentials
        case .user(let name):
            guard let user = UserRecord(name: name) else {
                throw HTTPTokenFile.Problem(description: "\(subject): no such user on this machine")
            }
            return user.credentials
        case .gid(let gid):
            return PeerCredentials(pid: 0, uid: groupSubjectUID(gid), gid: gid, groups: [gid])
        case .group(let name):
            guard let group = getgrnam(name) else {
                throw HTTPTokenFile.Problem(description: "\(subject): no such group on this machine")
            }
            let gid = group.pointee.gr_gid
            return PeerCredentials(pid: 0, uid: groupSubjectUID(gid), gid: gid, groups: [gid])
        }
    }
}

/// A user of the passwd database, with the groups it belongs to.
private struct UserRecord {
    let credentials: PeerCredentials

    init?(uid: UInt32) {
        guard let entry = getpwuid(uid) else { return nil }
        self.init(entry)
    }

    init?(name: String) {
        guard let entry = getpwnam(name) else { return nil }
        self.init(entry)
    }

    private init(_ entry: UnsafeMutablePointer<passwd>) {
        let uid = entry.pointee.pw_uid, gid = entry.pointee.pw_gid
        var groups = [gid_t](repeating: 0, count: 64)
        var count = Int32(groups.count)
        if getgrouplist(entry.pointee.pw_name, gid, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            _ = getgrouplist(entry.pointee.pw_name, gid, &groups, &count)
        }
        credentials = PeerCredentials(pid: 0, uid: uid, gid: gid, groups: Array(groups.prefix(Int(max(count, 0)))))
    }
}
