#if canImport(Glibc)
import Glibc
#endif

/// Where kvod listens when `--socket` is not given, and where clients look:
/// `$KVOD_SOCKET`; else, for root, `/run/kvod/kvod.sock` (the systemd unit's
/// path); else `$XDG_RUNTIME_DIR/kvod.sock`; else `/tmp/kvod-<uid>/kvod.sock`,
/// which works for any user on a fresh machine.
enum DefaultSocketPath {
    static func resolve(environment: [String: String]) -> String {
        if let explicit = environment["KVOD_SOCKET"], !explicit.isEmpty { return explicit }
        if getuid() == 0 { return "/run/kvod/kvod.sock" }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/kvod.sock" }
        return "/tmp/kvod-\(getuid())/kvod.sock"
    }
}
