import Foundation

/// How the suite is being run: plainly (`scripts/test.sh`) or under a
/// sanitizer (`scripts/ci/sanitizers.sh` sets `KVOD_TEST_SANITIZER`).
enum TestEnvironment {
    /// `address`, `thread`, or nil for a plain run.
    static let sanitizer = ProcessInfo.processInfo.environment["KVOD_TEST_SANITIZER"]

    /// Whether kvod's resident memory measures kvod's own use. Not under a
    /// sanitizer: ASan keeps freed memory in quarantine (256 MiB) and both add
    /// shadow memory, so memory bounds are checked in plain runs only.
    static var residentMemoryIsMeaningful: Bool { sanitizer == nil }

    /// `count`, or `count / divisor` under a sanitizer, which slows the test
    /// process and kvod several times over: load tests keep their shape and
    /// their checks, at a size that fits CI's time and leaves the two cores
    /// to the other suites' deadlines.
    static func scaled(_ count: Int, dividedUnderSanitizerBy divisor: Int) -> Int {
        sanitizer == nil ? count : max(1, count / divisor)
    }
}
