import Foundation
import Glibc

/// A short-named temporary folder (socket paths must stay under 108 bytes),
/// removed with everything in it when this object goes away.
///
/// Keep the object alive for as long as its path is in use: Swift may release
/// it after its last use, not at the end of the scope.
public final class TemporaryDirectory {
    public let path: String

    public init() throws {
        path = try Self.make()
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Makes a folder that the caller removes.
    public static func make() throws -> String {
        var template = Array("/tmp/kvodtest-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed: errno \(errno)") }
        return String(cString: made)
    }
}
