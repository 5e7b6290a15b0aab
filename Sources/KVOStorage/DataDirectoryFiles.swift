import Foundation

/// The data directory's own files and their modes: what kvod creates is for
/// its user alone, whatever the umask, and what it cannot write is named.
enum DataDirectoryFiles {
    /// Makes `directory` (and missing parents) if it is not there, the last
    /// level mode 0700 whatever the umask. Returns a warning when it existed
    /// and its group or others may write in it (they could replace kvod.db).
    static func prepareDirectory(_ directory: String) throws(StorageError) -> String? {
        var status = stat()
        if stat(directory, &status) == 0 {
            guard (status.st_mode & S_IFMT) == S_IFDIR else {
                throw StorageError("the data directory \(directory) exists and is not a directory")
            }
            let mode = status.st_mode & 0o777
            guard mode & 0o022 != 0 else { return nil }
            return "the data directory \(directory) is writable by its group or by others (mode \(octal(mode))): "
                + "they could replace or remove kvod's files; run chmod go-w \(directory)"
        }
        try makeDirectory(directory)
        guard chmod(directory, 0o700) == 0 else {
            throw StorageError("cannot make \(directory) mode 0700: \(String(cString: strerror(errno)))")
        }
        return nil
    }

    /// Makes `directory` and its missing parents, one level at a time, so
    /// that a failure names the level and why (Foundation's said only "You
    /// don't have permission"), with what to do.
    private static func makeDirectory(_ directory: String) throws(StorageError) {
        let absolute = directory.hasPrefix("/") ? directory : FileManager.default.currentDirectoryPath + "/" + directory
        var path = ""
        for component in absolute.split(separator: "/") {
            let parent = path.isEmpty ? "/" : path
            path += "/" + component
            var status = stat()
            if stat(path, &status) == 0 { continue }
            guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
                let reason = String(cString: strerror(errno))
                let owner = errno == EACCES || errno == EPERM
                    ? "; create it as root for kvod's user (install -d -m 0700 -o USER \(directory)), or choose another --data-dir"
                    : ""
                throw StorageError("""
                    kvod (uid \(getuid())) cannot create the data directory \(directory): making \(path) in \
                    \(parent) failed (\(reason))\(owner)
                    """)
            }
        }
    }

    /// Creates the database file mode 0600 before SQLite opens it, so that
    /// the WAL, which SQLite creates with the database's mode, is 0600 too
    /// (SQLite's own default is 0644 less the umask). An existing file that
    /// group or others may read is made 0600. A file or directory kvod may
    /// not write is named, with the permission it needs, instead of SQLite's
    /// "attempt to write a readonly database".
    static func prepareDatabaseFile(_ path: String, in directory: String) throws(StorageError) {
        guard access(directory, W_OK | X_OK) == 0 || errno == ENOENT else {
            throw StorageError("""
                kvod (uid \(getuid())) may not write in the data directory \(directory) \
                (\(String(cString: strerror(errno)))): it needs write and search permission there, where it \
                keeps \(StateDatabase.fileName) and its -wal file
                """)
        }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StorageError("""
                cannot open \(path) for reading and writing (\(String(cString: strerror(errno)))): kvod \
                (uid \(getuid())) needs read and write permission on it
                """)
        }
        defer { close(fd) }
        var status = stat()
        if fstat(fd, &status) == 0, status.st_mode & 0o777 != 0o600, status.st_uid == getuid() {
            _ = fchmod(fd, 0o600)
        }
        // A WAL left by a kvod that did not stop cleanly keeps its own mode.
        if stat(path + "-wal", &status) == 0, status.st_mode & 0o077 != 0, status.st_uid == getuid() {
            _ = chmod(path + "-wal", 0o600)
        }
    }

    private static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
