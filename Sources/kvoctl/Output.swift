import Foundation
import Synchronization

/// Standard output and error, one whole line per write, unbuffered: a
/// pipeline (`| jq`) sees each event as it happens, and lines written from
/// the connection's reader thread never interleave.
enum Output {
    private static let lock = Mutex(())

    static func line(_ text: String) {
        lock.withLock { _ in FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
    }

    static func error(_ text: String) {
        lock.withLock { _ in FileHandle.standardError.write(Data((text + "\n").utf8)) }
    }
}
