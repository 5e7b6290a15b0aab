import Foundation
import KVOValues
import KVOProtocol

/// A snapshot kvod made for this connection (`backup`, docs/PROTOCOL.md, "Backups").
public struct BackupSnapshot: Sendable, Equatable {
    /// The seq of the last change it holds: every change up to it, none after.
    public let seq: UInt64
    /// Its length in bytes.
    public let size: UInt64
}

/// `backup`: a consistent copy of kvod's data directory, read over the
/// connection a chunk per request, so that neither side ever holds it whole.
/// kvod keeps two copies at most (each as large as its database): one is let
/// go when its connection reads it to the end, asks for another or closes.
/// Needs root, kvod's own user or a `backup` grant in kvod's `--policy`
/// (else `forbidden`); a kvod without `--data-dir`, or over etcd (back up
/// etcd with `etcdctl snapshot save`), answers `bad_request`.
extension KVOConnection {
    /// Asks kvod for a snapshot and waits until it is made: kvod copies its
    /// database between commits, so this takes as long as the copy (writes
    /// go on meanwhile). The connection then holds the snapshot until it asks
    /// for another or closes; nothing else is read from it meanwhile, so
    /// the configuration's `requestTimeout` must leave time for the copy.
    public func startBackup() async throws(KVOClientError) -> BackupSnapshot {
        try await request(RequestEncoder(op: .backup), "backup") { reply in
            guard let seq = reply.unsigned(.seq), let size = reply.unsigned(.size) else { return nil }
            return BackupSnapshot(seq: seq, size: size)
        }
    }

    /// Up to 48 KiB of the snapshot ``startBackup()`` made, from `offset`:
    /// fewer only at its end, none there; asked at its end (`size`), kvod
    /// lets the snapshot go, and reads `bad_request` after.
    public func backupChunk(at offset: UInt64) async throws(KVOClientError) -> Data {
        var request = RequestEncoder(op: .backup)
        request.integer(.offset, offset)
        return try await self.request(request, "backup") { reply in
            if case .string(let text)? = reply[.data] { Data(base64Encoded: text) } else { nil }
        }
    }

    /// Makes a snapshot and hands it to `write` chunk by chunk, in order,
    /// from the first byte to the last; returns it once `write` has had all
    /// of it (and kvod has let it go). An error `write` throws ends the
    /// backup with that error.
    public func backup(into write: (Data) throws -> Void) async throws -> BackupSnapshot {
        try await backup(writing: write).get()
    }

    /// ``backup(into:)`` with `write`'s error apart from KVOClient's, for kvoctl: a failed
    /// write ends the download (kvod is not told) and comes back as the result's failure.
    package func backup<WriteError>(writing write: (Data) throws(WriteError) -> Void)
        async throws(KVOClientError) -> Result<BackupSnapshot, WriteError>
    {
        let snapshot = try await startBackup()
        var offset: UInt64 = 0
        while offset < snapshot.size {
            let chunk = try await backupChunk(at: offset)
            guard !chunk.isEmpty else {
                throw KVOClientError(.protocolViolation, "kvod's backup ended at byte \(offset) of \(snapshot.size)")
            }
            do throws(WriteError) { try write(chunk) } catch { return .failure(error) }
            offset += UInt64(chunk.count)
        }
        guard try await backupChunk(at: offset).isEmpty else {
            throw KVOClientError(.protocolViolation, "kvod's backup goes on past the \(snapshot.size) bytes it announced")
        }
        return .success(snapshot)
    }
}
