#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where kvod listens when `--socket` is not given, and where its clients
/// (KVOClient, kvoctl) look: one rule, shared by both sides.
///
/// The daemon's rule: `$KVOD_SOCKET`; else, for root, ``system`` (the systemd
/// unit's path); else `$XDG_RUNTIME_DIR/kvod.sock`; else
/// `/tmp/kvod-<uid>/kvod.sock`, which works for any user on a fresh machine.
///
/// A client follows the same rule with one addition (``resolveForClient(environment:uid:fileExists:)``):
/// a user who has no kvod of their own talks to the system's.
public enum DefaultSocketPath {
    /// The system service's socket, `/run/kvod/kvod.sock`.
    public static let system = "/run/kvod/kvod.sock"

    /// The path kvod listens on when `--socket` is not given.
    public static func resolve(environment: [String: String], uid: uid_t = getuid()) -> String {
        if let explicit = environment["KVOD_SOCKET"], !explicit.isEmpty { return explicit }
        if uid == 0 { return system }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/kvod.sock" }
        return "/tmp/kvod-\(uid)/kvod.sock"
    }

    /// Whether `$KVOD_SOCKET` names the socket: then the path is the user's
    /// choice, not a default that someone else may have prepared.
    public static func isChosen(environment: [String: String]) -> Bool {
        environment["KVOD_SOCKET"].map { !$0.isEmpty } ?? false
    }

    /// The path a client connects to: the daemon's rule, except that when
    /// `$KVOD_SOCKET` is not set and the per-user socket does not exist but
    /// ``system`` does, the client uses ``system`` (a non-root user talking
    /// to the system service).
    ///
    /// `fileExists` is asked about paths only; the engine does no I/O itself.
    public static func resolveForClient(environment: [String: String], uid: uid_t = getuid(),
                                        fileExists: (String) -> Bool) -> String {
        let path = resolve(environment: environment, uid: uid)
        if let explicit = environment["KVOD_SOCKET"], !explicit.isEmpty { return path }
        if path != system && !fileExists(path) && fileExists(system) { return system }
        return path
    }
}
