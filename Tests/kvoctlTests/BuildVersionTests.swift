import Foundation
import KVOTestSupport
import Testing

/// `kvod --version`, `kvoctl --version` and `info` name the version and the
/// commit the build read from git (scripts/build-info.sh), not a number
/// written in the source.
@Suite(.onDedicatedThread) struct BuildVersionTests {
    /// `0.2.0 (commit 1234abcd5678)`, `0.2.0+3 (commit …)`, or unknowns outside git.
    static var versionLine: Regex<(Substring, Substring, Substring)> {
        /(unknown|\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+\d+)?) \(commit (unknown|[0-9a-f]{12})\)/
    }
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func kvodAndKvoctlPrintTheVersionAndCommitThatInfoReportsAndGitGives() async throws {
        let kvodLine = try await CommandRun.run(KVODProcess.binaryURL, ["--version"]).stdout
        let kvoctlLine = try await CommandRun.run(KVOCtl.binaryURL, ["--version"]).stdout
        let match = try #require(kvodLine.trimmingCharacters(in: .newlines).wholeMatch(of: Self.versionLine),
                                 "kvod --version: \(kvodLine)")
        let (version, commit) = (String(match.1), String(match.2))
        #expect(kvoctlLine == kvodLine, "kvoctl and kvod, built together, name the same build")

        let kvod = try await KVODProcess()
        let info = try await KVOCtl.run(kvod, ["info"])
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
        #expect(fields["version"] as? String == version)
        #expect(fields["commit"] as? String == commit)

        guard commit != "unknown" else { return }
        // Built from this checkout: its HEAD, or an earlier commit when one was made since the build.
        let head = try await git(["rev-parse", "--short=12", "HEAD"]).stdout.trimmingCharacters(in: .newlines)
        if commit == head {
            let expected = try await CommandRun.run(Self.root.appendingPathComponent("scripts/build-info.sh"), [])
            #expect(expected.stdout == "\(version) \(commit)\n", "scripts/build-info.sh says \(expected.stdout)")
        } else {
            #expect(try await git(["merge-base", "--is-ancestor", commit, "HEAD"]).status == 0,
                    "\(commit) is not HEAD (\(head)) nor before it")
        }
    }

    private func git(_ arguments: [String]) async throws -> CommandRun {
        try await CommandRun.run(URL(fileURLWithPath: "/usr/bin/git"), ["-C", Self.root.path] + arguments)
    }
}
