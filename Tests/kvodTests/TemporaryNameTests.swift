import Foundation
import Glibc
import KVOTestSupport
import Testing

/// `Sources/CMktemp`: kvod's own mktemp(3), which Foundation's atomic writes
/// call in kvod and kvoctl in place of glibc's, keeps glibc's contract.
@Suite struct TemporaryNameTests {
    private func name(_ template: String) -> (name: String, errno: Int32) {
        var bytes = Array(template.utf8CString)
        errno = 0
        let result = bytes.withUnsafeMutableBufferPointer { mktemp($0.baseAddress!) }
        let error = errno
        return (String(cString: result!), error)
    }

    @Test func theSixXsBecomeANameOfNoExistingFile() throws {
        let folder = try TemporaryDirectory()
        var seen = Set<String>()
        for _ in 0..<50 {
            let (made, _) = name(folder.path + "/kvod.XXXXXX")
            #expect(made.hasPrefix(folder.path + "/kvod."))
            let suffix = made.dropFirst((folder.path + "/kvod.").count)
            #expect(suffix.count == 6 && suffix.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }, "\(made)")
            #expect(!FileManager.default.fileExists(atPath: made))
            seen.insert(made)
            // Made, so that a later draw must avoid it.
            #expect(FileManager.default.createFile(atPath: made, contents: nil))
        }
        #expect(seen.count == 50)
    }

    @Test func aTemplateWithoutSixXsBecomesEmptyWithEINVAL() {
        for template in ["/tmp/kvod.XXXXX", "/tmp/kvod.XXXXXXa", ""] {
            let (made, error) = name(template)
            #expect(made.isEmpty && error == EINVAL, "\(template): '\(made)' errno \(error)")
        }
    }

    @Test func aMissingDirectoryStillGivesAName() {
        // As glibc's: only the name is made (lstat says ENOENT); creating it then fails.
        let (made, _) = name("/nonexistent-kvod-dir/kvod.XXXXXX")
        #expect(made.hasPrefix("/nonexistent-kvod-dir/kvod.") && !made.hasSuffix("XXXXXX"), "\(made)")
    }
}
