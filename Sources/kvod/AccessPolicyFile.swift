#if canImport(Glibc)
import Glibc
#endif
import Foundation
import KVOEngine

/// Reads `--policy PATH` into an ``AccessPolicy``: the file's format is the
/// engine's business; user and group names are resolved here, once, at start.
enum AccessPolicyFile {
    /// The policy in `path`, with root and the daemon's own user as superusers.
    static func load(_ path: String) throws(DaemonError) -> AccessPolicy {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .cannotListen("cannot read the policy file \(path)")
        }
        do {
            return try AccessPolicy(json: data, superusers: [0, getuid()], userID: userID, groupID: groupID)
        } catch {
            throw .cannotListen("policy file \(path): \(error)")
        }
    }

    private static func userID(_ name: String) -> UInt32? {
        getpwnam(name).map { $0.pointee.pw_uid }
    }

    private static func groupID(_ name: String) -> UInt32? {
        getgrnam(name).map { $0.pointee.gr_gid }
    }
}
