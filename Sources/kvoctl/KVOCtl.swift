import ArgumentParser
import Foundation
import KVOBuildInfo

/// `kvoctl`: kvod from a shell, built on KVOClient.
@main
struct KVOCtl: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "kvoctl",
        abstract: "Set, get and observe values in kvod from a shell.",
        discussion: """
            VALUE arguments are JSON (42, -5, true, null, "text", [1,2], {"a":1}); a bare word that is not \
            JSON is taken as a string, so `kvoctl set person/1 name xsc` sets the string "xsc". Text that \
            starts like JSON ({, [ or ") but does not parse, and a word that looks like a number or a JSON \
            literal but is not JSON (1e400, 01, +1, NaN, True), are usage errors: quote the value ('"01"') or \
            pass --string (every VALUE verbatim as a string). --json-file PATH (- for standard input) reads \
            the value from a file instead. After --, every word is a value (kvoctl set o k -- -rf).

            The socket is --socket, else $KVOD_SOCKET, else kvod's default path (/run/kvod/kvod.sock for root, \
            $XDG_RUNTIME_DIR/kvod.sock, or /tmp/kvod-<uid>/kvod.sock), falling back to /run/kvod/kvod.sock \
            when the per-user socket does not exist. --socket, --quiet and --request-timeout go before or after \
            the command name.

            Exit status (one per kind of failure, for scripts to branch on; docs/CLIENT.md has the table):
              0   ok
              1   kvod refused for another reason (not_an_object, ...); raw: any error
              2   usage: unknown command or option, bad argument or VALUE, unreadable file
              3   cannot connect, or the connection was lost
              4   observe --count: fewer events than --count within --timeout
              5   a condition (--if-mod-seq, --if-value) did not hold; nothing changed
              6   observe cannot resume from --since or --resume-file (compacted)
              7   --await timed out; the change is applied
              8   not found (not_found)
              9   forbidden by kvod's --policy (forbidden)
              10  bad request (bad_request, bad_json, unknown_op)
              11  unavailable: kvod cannot reach etcd; nothing changed, retry (unavailable)
              12  no reply within --request-timeout (timed_out); may have been applied
              13  kvod's disk is full: the write was refused, nothing changed; retry once space is freed (storage_full)
            Durations (--ttl, --timeout, --throttle, --request-timeout) take a unit, 500ms, 5s, 1.5m, 2h, or are \
            a bare number of seconds.
            Every non-zero status prints one line on standard error that says why (kvoctl: CODE: MESSAGE \
            for the daemon's errors); --quiet leaves it out, except for usage errors.
            """,
        version: BuildInfo.description,
        subcommands: [
            SetCommand.self, GetCommand.self, DeleteCommand.self, InsertCommand.self, RemoveCommand.self,
            ReplaceCommand.self, IncrCommand.self, BatchCommand.self, ObserveCommand.self, ListCommand.self,
            InfoCommand.self, PingCommand.self,
            MetricsCommand.self, BackupCommand.self, TokenCommand.self, RawCommand.self,
        ])

    @OptionGroup var connection: ConnectionOptions

    /// Without a subcommand: the help, on standard error, and the usage status.
    func run() async throws {
        Output.error(Self.helpMessage())
        throw CommandFailure.usage("give a command")
    }

    /// ArgumentParser's own `main`, except that usage errors exit with 2
    /// (scripts branch on 1 for the daemon's errors), not EX_USAGE's 64, and
    /// that every failure prints one line that says why (unless `--quiet`).
    static func main() async {
        var quiet = false
        do {
            var command = try parseAsRoot()
            quiet = Self.isQuiet(command)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            if !quiet || failure.status == ExitStatus.usage { Output.error("kvoctl: " + failure.reason) }
            exit(withError: failure.status)
        } catch {
            if exitCode(for: error) != .success,
               let message = UnknownCommand.message(Array(CommandLine.arguments.dropFirst()), commands: commandNames) {
                Output.error(message)
                exit(withError: ExitStatus.usage)
            }
            if exitCode(for: error) == .validationFailure {
                Output.error(fullMessage(for: error))
                exit(withError: ExitStatus.usage)
            }
            exit(withError: error)
        }
    }

    /// The names of kvoctl's commands.
    private nonisolated static var commandNames: [String] {
        configuration.subcommands.compactMap { command in command.configuration.commandName }
    }

    /// Whether the command was given `--quiet`.
    private nonisolated static func isQuiet(_ command: any ParsableCommand) -> Bool {
        (command as? any ConnectingCommand)?.connection.quiet ?? false
    }
}
