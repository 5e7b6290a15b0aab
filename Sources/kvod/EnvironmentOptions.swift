import Foundation

/// kvod's options taken from `KVOD_<OPTION>` environment variables, so that
/// containers and `/etc/default/kvod` configure kvod without a command line.
///
/// They become arguments placed before the command line's, and ArgumentParser
/// keeps an option's last value: an option on the command line wins.
struct EnvironmentOptions {
    /// Every option that has a variable, by its long name. `--socket` is not
    /// here: `KVOD_SOCKET` already chooses the default socket path; nor is
    /// `--restore`, done once by hand (a restore refuses a data directory
    /// that is not empty, so a variable would stop every later start).
    static let optionNames = [
        "socket-mode", "max-line-bytes", "data-dir", "sync", "storage-reserve", "history", "history-bytes", "log-level",
        "output-hard-limit", "output-soft-limit", "output-soft-seconds", "max-connections",
        "max-connections-per-uid", "max-observations-per-connection", "max-memory", "max-client-memory", "policy",
        "fanout-pause-microseconds", "etcd", "etcd-prefix", "etcd-max-request-bytes", "etcd-max-txn-ops",
        "etcd-lease-ttl", "etcd-history-revisions", "etcd-watch-buffer", "http", "http-tokens", "http-cert", "http-key", "http-cors-origin", "http-request-timeout",
        "http-allow-root-token", "http-metrics-open", "http-insecure",
    ]

    /// The options of ``optionNames`` that are flags: their variable is `1` or
    /// `true` (the flag given) or `0` or `false` (not given).
    static let flagNames: Set<String> = ["http-allow-root-token", "http-metrics-open", "http-insecure"]

    /// `log-level` → `KVOD_LOG_LEVEL`.
    static func variableName(_ option: String) -> String {
        "KVOD_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// The variables set (and not empty, as in a Debian defaults file's
    /// `KVOD_HISTORY=`), in ``optionNames``' order, with their option.
    let settings: [(variable: String, option: String, value: String)]

    init(_ environment: [String: String]) {
        settings = Self.optionNames.compactMap { option in
            let variable = Self.variableName(option)
            guard let value = environment[variable], !value.isEmpty else { return nil }
            return (variable, option, value)
        }
    }

    /// Variables named like kvod's (`KVOD_…`) that no option has: most
    /// likely a misspelling (`KVOD_HISTROY=5`), which kvod warns of at start
    /// rather than ignoring. `KVOD_SOCKET` and the unit's `KVOD_OPTIONS` are
    /// kvod's too; `KVOD_TEST_…` are its test suite's.
    static func unknownVariables(in environment: [String: String]) -> [String] {
        let known = Set(optionNames.map(variableName)).union(["KVOD_SOCKET", "KVOD_OPTIONS"])
        return environment.keys.filter { $0.hasPrefix("KVOD_") && !$0.hasPrefix("KVOD_TEST_") && !known.contains($0) }
            .sorted()
    }

    /// The settings as command-line arguments.
    var arguments: [String] { settings.flatMap(Self.arguments) }

    /// `--option value`; for a flag `--flag` when set to 1 or true, nothing for 0
    /// or false, and the value itself otherwise, which the parser then refuses.
    private static func arguments(_ setting: (variable: String, option: String, value: String)) -> [String] {
        guard flagNames.contains(setting.option) else { return ["--\(setting.option)", setting.value] }
        switch setting.value.lowercased() {
        case "1", "true": return ["--\(setting.option)"]
        case "0", "false": return []
        default: return ["--\(setting.option)", setting.value]
        }
    }

    /// The first setting that `parse` refuses on its own, with the reason, so
    /// that an error can name the variable rather than a flag nobody typed.
    func firstRefused(by parse: ([String]) throws -> Void) -> (variable: String, value: String, error: any Error)? {
        for setting in settings {
            do {
                try parse(Self.arguments(setting))
            } catch {
                return (setting.variable, setting.value, error)
            }
        }
        return nil
    }

    /// The `--help` paragraph that names every variable.
    static var helpText: String {
        "Every option but --socket and --restore can also be set by a variable named for it: "
            + optionNames.map { "\(variableName($0)) (--\($0))" }.joined(separator: ", ")
            + ". An empty variable counts as unset; an option on the command line wins over its variable."
    }
}
