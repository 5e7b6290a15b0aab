import Foundation
import KVOBuildInfo
import KVOEngine

/// The data directory's format version: the schema version of `kvod.db`
/// (`PRAGMA user_version`, ``StateDatabase/schemaVersion``). kvod opens its
/// own version and migrates older ones; a directory written by a newer kvod
/// is refused before anything in it is written, so that the newer kvod can
/// still read it (docs/OPERATIONS.md, "Upgrading").
enum DataFormatVersion {
    /// The schema version in the header of the database file at `path`
    /// (bytes 60-63, big-endian, of an SQLite file); nil when the file is
    /// missing, shorter than a header or not SQLite's. Read without SQLite,
    /// which would convert a rollback-journal file to WAL or checkpoint a WAL.
    static func inHeader(of path: String) -> Int64? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 100)
        guard read(fd, &header, header.count) == header.count,
              header.starts(with: Array("SQLite format 3\0".utf8)) else { return nil }
        return header[60..<64].reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    /// Throws when the file at `path` says it was written by a newer kvod.
    static func refuseNewer(_ path: String) throws(StorageError) {
        if let version = inHeader(of: path), version > StateDatabase.schemaVersion {
            throw refusal(path, version: version)
        }
    }

    /// What kvod says when a newer kvod wrote `path`: both versions, and what to do.
    static func refusal(_ path: String, version: Int64) -> StorageError {
        StorageError("""
            \(path) has schema version \(version), written by a newer kvod; this kvod (\(BuildInfo.version)) reads \
            schema version \(StateDatabase.schemaVersion) and older and has changed nothing in it: run the newer \
            kvod again, or start this one with another --data-dir
            """)
    }
}
