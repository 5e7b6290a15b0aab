import Glibc
import KVOValues

/// The check a client makes before it connects to a default socket path:
/// the directory and the socket belong to whom they should
/// (``SocketDirectoryRule``), so that a socket another user put at
/// `/tmp/kvod-<uid>/kvod.sock` is not taken for kvod.
enum SocketOwnership {
    /// Throws `cannot_connect`, saying what is wrong, unless the socket at
    /// `path` and its directory belong to an expected owner: this user for
    /// a per-user path; root or the `kvod` user for ``DefaultSocketPath/system``.
    /// A missing socket is left to `connect` to report.
    static func verify(_ path: String) throws(KVOClientError) {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")), slash != path.utf8.startIndex else { return }
        let directory = String(path[..<slash])
        let owners = expectedOwners(of: path)
        let remedy = "or name the socket you trust with KVOD_SOCKET or --socket"
        var status = stat()
        guard lstat(directory, &status) == 0 else { return }
        if let problem = SocketDirectoryRule.problem(directory: directory, status, owners: owners, remedy: remedy) {
            throw KVOClientError(.cannotConnect, "not connecting to \(path): \(problem)")
        }
        guard lstat(path, &status) == 0 else { return }
        if let problem = SocketDirectoryRule.problem(socket: path, status, owners: owners, remedy: remedy) {
            throw KVOClientError(.cannotConnect, "not connecting to \(path): \(problem)")
        }
    }

    private static func expectedOwners(of path: String) -> [uid_t] {
        guard path == DefaultSocketPath.system else { return [getuid()] }
        // The system service runs as `kvod` (systemd/kvod.service); systemd
        // makes /run/kvod as root or as that user.
        var owners: [uid_t] = [0]
        if let entry = getpwnam("kvod") { owners.append(entry.pointee.pw_uid) }
        return owners
    }
}
