// docs/CLIENT.md, "Resuming after the program's own restart"; built, not run (it follows changes until it fails).
// snippet.hide
import Foundation
import KVOClient

func resumeFromFileSnippet(_ connection: KVOConnection, path: String, handle: (Change) -> Void) async throws {
    // snippet.show
    let saved = try? String(contentsOfFile: path, encoding: .utf8)
    let point = saved.flatMap { ResumePoint($0.trimmingCharacters(in: .whitespacesAndNewlines)) }  // nil: from now
    for try await change in connection.changes(of: "person/1", keyPath: "name", options: [.new], since: point) {
        handle(change)
        if let next = change.resumePoint { try next.description.write(toFile: path, atomically: true, encoding: .utf8) }
    }
    // snippet.hide
}
