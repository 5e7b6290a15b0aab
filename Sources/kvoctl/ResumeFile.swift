import Foundation
import KVOClient
import KVOValues

/// `observe --resume-file PATH`: the point after the last event printed, as
/// one line `EPOCH:SEQ`, so that a script that runs kvoctl again (after kvod
/// or kvoctl stopped) goes on with no gap and no repeat.
struct ResumeFile: Sendable {
    let path: String

    /// The point the file holds; nil when there is no file (start from now).
    func read() throws(CommandFailure) -> ResumePoint? {
        let data: [UInt8]
        do {
            data = Array(try LocalFile.read(path))
        } catch {
            if error.isMissing { return nil }
            throw .usage("cannot read --resume-file \(path): \(error.reason)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let point = ResumePoint(text) else {
            throw .usage("--resume-file \(path) does not hold a resume point (EPOCH:SEQ): \(text.prefix(80))")
        }
        return point
    }

    /// Replaces the file's point in one step (a temporary file, then rename).
    func write(_ point: ResumePoint) throws(CommandFailure) {
        do {
            try LocalFile.replace(path, with: point.description + "\n")
        } catch {
            throw .usage("cannot write --resume-file \(error.path): \(error.reason)")
        }
    }
}
