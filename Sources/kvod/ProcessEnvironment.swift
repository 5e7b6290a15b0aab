#if canImport(Glibc)
import Glibc
#endif

/// Environment variables meant for kvod alone, which it must not pass on.
enum ProcessEnvironment {
    /// Returns `name`'s value and removes it from the environment, as
    /// `sd_listen_fds(unset_environment=1)` does. Not thread-safe (`unsetenv`):
    /// call at startup, before other threads exist.
    static func take(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        unsetenv(name)
        return text
    }
}
