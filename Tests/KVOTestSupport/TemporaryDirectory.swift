import Glibc

/// A short-named temporary folder (socket paths must stay under 108 bytes).
public enum TemporaryDirectory {
    public static func make() throws -> String {
        var template = Array("/tmp/kvoctest-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed: errno \(errno)") }
        return String(cString: made)
    }
}
