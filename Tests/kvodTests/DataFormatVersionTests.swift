import Foundation
import KVOEngine
@testable import KVOStorage
import KVOTestSupport
import Testing

/// A data directory written by a newer kvod (a higher schema version in
/// kvod.db) is refused at start with both versions named, and not one byte
/// of it changes, so that the newer kvod can go on with it
/// (docs/OPERATIONS.md, "Upgrading").
@Suite(.onDedicatedThread) struct DataFormatVersionTests {
    /// Every file in `directory`, with its bytes.
    static func files(_ directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return files
    }

    /// A directory as a newer kvod could leave it: with one value, its schema
    /// version one above this kvod's, in `journalMode`; with "wal", the newer
    /// version is still in the WAL (that kvod was killed before a checkpoint).
    static func newerDirectory(journalMode: String) throws -> DataDirectory {
        let data = try DataDirectory()
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        _ = try LineClient(path: kvod.socketPath).request(#"{"op":"set","object":"o","keyPath":"k","value":1}"#)
        try kvod.terminate()
        let database = try SQLiteConnection(path: data.path + "/" + StateDatabase.fileName)
        try database.execute("PRAGMA journal_mode=\(journalMode)")
        try database.execute("PRAGMA user_version = \(StateDatabase.schemaVersion + 1)")
        database.keepWALOnClose()
        return data
    }

    @Test(arguments: ["delete", "wal"])
    func aDirectoryWrittenByANewerKvodIsRefusedNamingBothVersionsAndLeftAsItWas(journalMode: String) async throws {
        let data = try Self.newerDirectory(journalMode: journalMode)
        let before = try Self.files(data.path)
        if journalMode == "wal" { #expect(before[StateDatabase.fileName + "-wal"]?.isEmpty == false) }

        let folder = try TemporaryDirectory()
        let socket = folder.path + "/kvod.sock"
        let run = try await CommandRun.run(KVODProcess.binaryURL, ["--socket", socket, "--data-dir", data.path])
        #expect(run.status == 1)
        let newer = StateDatabase.schemaVersion + 1
        // "0.2.0 (commit …)": the version is the part before the commit.
        let version = try await CommandRun.run(KVODProcess.binaryURL, ["--version"]).stdout.prefix { $0 != " " }
        #expect(run.stderr.contains("has schema version \(newer), written by a newer kvod; this kvod (\(version)) "
                                        + "reads schema version \(StateDatabase.schemaVersion) and older"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: socket))
        #expect(try Self.files(data.path) == before)
        withExtendedLifetime(folder) {}
    }
}
