import Foundation

/// Standard output and error, one whole line per write, unbuffered: a
/// pipeline (`| jq`) sees each event as it happens, and lines written from
/// the connection's reader thread never interleave.
enum Output {
    /// An NSLock, not a Mutex, so that ThreadSanitizer sees it (see KVOClient's `Locked`).
    private static let lock = NSLock()

    static func line(_ text: String) {
        lock.withLock { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
    }

    static func error(_ text: String) {
        lock.withLock { FileHandle.standardError.write(Data((text + "\n").utf8)) }
    }
}
