#if canImport(Glibc)
import Glibc
#endif
import KVOValues

/// The socket's place in the file system: made ready before bind, removed
/// at shutdown.
enum SocketFile {
    /// What is at the socket path before kvod binds it.
    enum Occupant: Equatable {
        case nothing
        /// A socket file nobody listens on, left by a kvod that died.
        case staleSocket
        /// A socket that accepted a connection: another daemon serves it.
        case liveSocket
        /// Something that is not a socket; kvod never deletes it.
        case otherFile
    }

    /// The longest path `sockaddr_un` holds with its terminating NUL.
    static let maxPathBytes = 107

    /// Checks the path and its directory, creates the directory if missing,
    /// and removes a stale socket file, so that bind can succeed. A default
    /// path's directory must also pass ``SocketDirectoryRule`` (see
    /// ``secureDefaultDirectory(of:)``).
    static func prepare(_ path: String, isDefault: Bool = false) throws(DaemonError) {
        guard !path.isEmpty, path.utf8.count <= maxPathBytes else {
            throw .cannotListen("socket path must be 1 to \(maxPathBytes) bytes long: \(path)")
        }
        if isDefault {
            try secureDefaultDirectory(of: path)
        } else {
            try makeParentDirectory(of: path)
        }
        switch occupant(of: path) {
        case .nothing:
            return
        case .staleSocket:
            unlink(path)
        case .liveSocket:
            throw DaemonError(description: "another kvod is already listening on \(path)", exitCode: 2)
        case .otherFile:
            throw .cannotListen("\(path) exists and is not a socket; not touching it")
        }
    }

    static func occupant(of path: String) -> Occupant {
        var status = stat()
        guard lstat(path, &status) == 0 else { return .nothing }
        guard (status.st_mode & S_IFMT) == S_IFSOCK else { return .otherFile }
        return answers(path) ? .liveSocket : .staleSocket
    }

    /// Whether something accepts a connection on the socket at `path`.
    static func answers(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.prefix(maxPathBytes).enumerated() { buffer[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }

    private static func makeParentDirectory(of path: String) throws(DaemonError) {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")), slash != path.utf8.startIndex else { return }
        let directory = String(path[..<slash])
        var status = stat()
        if stat(directory, &status) == 0 { return }
        // Only the last level is made: a missing grandparent is a typo, not a default.
        if mkdir(directory, getuid() == 0 ? 0o755 : 0o700) != 0 && errno != EEXIST {
            throw .cannotListen("cannot create \(directory): \(String(cString: strerror(errno)))")
        }
    }

}
