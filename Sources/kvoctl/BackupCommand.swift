import ArgumentParser
import Foundation
import KVOClient
import KVOProtocol
import KVOStorage
import KVOValues

/// `kvoctl backup FILE`: a consistent copy of kvod's data directory, made
/// while kvod runs, streamed over the socket into FILE and checked.
struct BackupCommand: AsyncParsableCommand, ConnectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy kvod's data directory into FILE while kvod runs, and check the copy.",
        discussion: """
            kvod copies its database between commits (writes go on, each waiting for one step of the copy at \
            most, a few milliseconds) and sends the copy over the socket; kvoctl writes it to FILE.tmp, syncs \
            it, checks it (SQLite's integrity check, a kvod database, the seq and size kvod said) and renames it \
            to FILE. It prints {"file":...,"seq":...,"size":...,"objects":...}: the copy holds every change up \
            to seq (so every change kvod acknowledged before the backup began) and none after. Restore with \
            kvod --data-dir NEWDIR --restore FILE.
            Needs root, kvod's own user or a "backup" grant in kvod's --policy (else exit 9); a kvod without \
            --data-dir, or over etcd (use etcdctl snapshot save), exits 10. No room for kvod's copy in its \
            data directory (it would leave less than kvod's --storage-reserve free) exits 13, leaving nothing \
            there. A copy that fails its check exits \
            1 and leaves FILE as it was; a file kvoctl cannot write exits 2. --request-timeout defaults to 10m \
            here: kvod answers once its copy is made.
            Example: kvoctl backup /var/backups/kvod-$(date +%F).db
            """)

    @Argument(help: ArgumentHelp("The file to write; replaced once the copy is whole and checked.", valueName: "file"))
    var file: String

    @OptionGroup var connection: ConnectionOptions

    /// How long the snapshot's reply may take when `--request-timeout` is not given.
    static let defaultTimeout: Duration = .seconds(600)

    func run() async throws {
        let output = try BackupOutput(path: file)
        do throws(CommandFailure) {
            let snapshot = try await download(into: output)
            try output.close()
            let contents = try check(output, against: snapshot)
            try output.commit()
            // `file` is kvoctl's own; the others are the protocol's names for what they count.
            var report: JSONObject = ["file": .string(file)]
            report[Field.seq] = .number(JSONNumber(validatedLiteral: String(contents.seq)))
            report[Field.size] = .number(JSONNumber(validatedLiteral: String(snapshot.size)))
            report[Field.objects] = .number(JSONNumber(contents.objects))
            Output.line(JSONValue.object(report).jsonString)
        } catch {
            output.discard()
            throw error
        }
    }

    /// Asks for the snapshot and writes it, a chunk at a time, into `output`; a write
    /// that fails ends the download and exits 2 once the connection is closed.
    private func download(into output: BackupOutput) async throws(CommandFailure) -> BackupSnapshot {
        let configure = { (configuration: inout KVOConnection.Configuration) in
            if connection.requestTimeout == nil { configuration.requestTimeout = Self.defaultTimeout }
        }
        return try await connection.run(configure: configure) { kvod throws(KVOClientError) in
            try await kvod.backup(writing: output.write)
        }.get()
    }

    /// Checks the written file: a whole kvod database, of the size and seq kvod said.
    private func check(_ output: BackupOutput, against snapshot: BackupSnapshot) throws(CommandFailure)
        -> BackupFile.Contents
    {
        let failed = { (why: String) in
            CommandFailure(ExitStatus.daemonError, "the backup failed its check: \(why); \(output.path) is unchanged")
        }
        guard output.written == snapshot.size else {
            throw failed("\(output.written) bytes came, not the \(snapshot.size) kvod announced")
        }
        let contents: BackupFile.Contents
        do {
            contents = try BackupFile.verify(output.temporary)
        } catch {
            throw failed(error.description)
        }
        guard contents.seq == snapshot.seq else {
            throw failed("it holds seq \(contents.seq), and kvod announced seq \(snapshot.seq)")
        }
        return contents
    }
}
