#if canImport(Glibc)
import Glibc
#endif
import KVOValues

extension SocketFile {
    /// The default socket's directory (`/tmp/kvod-<uid>`, `$XDG_RUNTIME_DIR`,
    /// `/run/kvod` for root) may have been made by someone else before kvod
    /// starts: made here 0700 (0755 for root's, which every user's clients
    /// pass through) when missing, and refused unless it passes
    /// ``SocketDirectoryRule`` with kvod's own uid as the owner. Checked
    /// after `mkdir` too: if someone else made it in between, `mkdir` fails
    /// with EEXIST and the check sees their directory.
    static func secureDefaultDirectory(of path: String) throws(DaemonError) {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")), slash != path.utf8.startIndex else { return }
        let directory = String(path[..<slash])
        var status = stat()
        if lstat(directory, &status) != 0 {
            guard errno == ENOENT else {
                throw .cannotListen("cannot look at \(directory): \(String(cString: strerror(errno)))")
            }
            if mkdir(directory, getuid() == 0 ? 0o755 : 0o700) != 0 && errno != EEXIST {
                throw .cannotListen("cannot create \(directory): \(String(cString: strerror(errno)))")
            }
            guard lstat(directory, &status) == 0 else {
                throw .cannotListen("cannot look at \(directory): \(String(cString: strerror(errno)))")
            }
        }
        if let problem = SocketDirectoryRule.problem(directory: directory, status, owners: [getuid()],
                                                     remedy: "or choose a socket with --socket PATH") {
            throw .cannotListen(problem)
        }
    }
}
