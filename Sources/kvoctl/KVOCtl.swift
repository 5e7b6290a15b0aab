import ArgumentParser
import Foundation
import KVOEngine

/// `kvoctl`: kvod from a shell, built on KVOClient.
@main
struct KVOCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kvoctl",
        abstract: "Set, get and observe values in kvod from a shell.",
        discussion: """
            VALUE arguments are JSON (42, true, null, "text", [1,2], {"a":1}); a bare word that is not JSON \
            is taken as a string, so `kvoctl set person/1 name xsc` sets the string "xsc". Text that starts \
            like JSON ({, [ or ") but does not parse is a usage error.

            The socket is --socket, else $KVOD_SOCKET, else kvod's default path (/run/kvod/kvod.sock for root, \
            $XDG_RUNTIME_DIR/kvod.sock, or /tmp/kvod-<uid>/kvod.sock), falling back to /run/kvod/kvod.sock \
            when the per-user socket does not exist.

            Exit status: 0 ok; 1 the daemon refused the request (not_found, bad_request, ...); 2 usage; \
            3 cannot connect, or the connection was lost; 4 observe --count timed out before enough events; \
            5 an --if-mod-seq or --if-value condition did not hold (nothing changed). \
            Errors go to standard error with the daemon's code and message.
            """,
        version: kvodVersion,
        subcommands: [
            SetCommand.self, GetCommand.self, DeleteCommand.self, InsertCommand.self, RemoveCommand.self,
            ReplaceCommand.self, BatchCommand.self, ObserveCommand.self, ListCommand.self, InfoCommand.self, PingCommand.self,
            RawCommand.self,
        ])

    /// Without a subcommand: the help, on standard error, and the usage status.
    func run() async throws {
        Output.error(Self.helpMessage())
        throw ExitStatus.usage
    }

    /// ArgumentParser's own `main`, except that usage errors exit with 2
    /// (scripts branch on 1 for the daemon's errors), not EX_USAGE's 64.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                Output.error(fullMessage(for: error))
                exit(withError: ExitStatus.usage)
            }
            exit(withError: error)
        }
    }
}
