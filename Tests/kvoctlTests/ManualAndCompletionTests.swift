import Foundation
import KVOTestSupport
import Testing

/// What scripts/install.sh installs besides the binaries: the committed man
/// pages (scripts/generate-manuals.sh) still name every option and command,
/// and kvoctl writes completion scripts its shells accept.
@Suite struct ManualAndCompletionTests {
    private static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private static func page(_ name: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent("docs/man/\(name)"), encoding: .utf8)
    }

    /// The long options an OPTIONS section of `--help` lists.
    private static func options(inHelp help: String) -> [String] {
        help.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("  --"), let word = line.split(separator: " ").first else { return nil }
            return String(word.dropFirst(2).split(separator: ",").first ?? "")
        }
    }

    @Test func kvodsManualPageIsInSectionEightAndNamesEveryOptionAndVariable() throws {
        let page = try Self.page("kvod.8")
        #expect(page.contains("\n.Dt KVOD 8\n"))
        let help = try CommandRun.run(KVODProcess.binaryURL, ["--help"]).stdout
        let options = Self.options(inHelp: help)
        #expect(options.contains("log-level"), "\(help)")
        for option in options {
            #expect(page.contains("Fl -\(option)"), "kvod.8 lacks --\(option): run scripts/generate-manuals.sh")
        }
        for variable in ["KVOD_LOG_LEVEL", "KVOD_HISTORY", "KVOD_POLICY"] { #expect(page.contains(variable)) }
        // Issue 34 item 8: defaults, µ, and no subcommand kvod does not have (scripts/man-page-fixes.py).
        #expect(page.contains(".It Fl -history Ar history\nHow many recent changes to keep for observe with since (0 to 10000000).\n.Pp\nDefault: 100000.\n"))
        #expect(page.contains(".It Fl -fanout-pause-microseconds Ar \\(mcs\n"))
        #expect(!page.contains(".It Em help"), "kvod has no help subcommand")
    }

    @Test func kvoctlsManualPageIsInSectionOneAndNamesEveryCommand() throws {
        let page = try Self.page("kvoctl.1")
        #expect(page.contains("\n.Dt KVOCTL 1\n"))
        let help = try KVOCtl.run(["--help"]).stdout
        let commands = help.components(separatedBy: "SUBCOMMANDS:").last?.split(separator: "\n").compactMap { line in
            line.hasPrefix("  ") && !line.hasPrefix("   ") ? line.split(separator: " ").first.map(String.init) : nil
        } ?? []
        #expect(commands.contains("observe"), "\(help)")
        for command in commands where command != "See" {
            #expect(page.contains(".It Em \(command)\n"),
                    "kvoctl.1 lacks \(command): run scripts/generate-manuals.sh")
        }
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func kvoctlWritesACompletionScriptItsShellAccepts(shell: String) throws {
        let script = try KVOCtl.run(["--generate-completion-script", shell])
        #expect(script.status == 0)
        #expect(script.stdout.contains("observe"))
        let shellURL = URL(fileURLWithPath: "/usr/bin/\(shell)")
        // zsh and fish are checked where installed; bash always is.
        guard shell == "bash" || FileManager.default.isExecutableFile(atPath: shellURL.path) else { return }
        let check = try CommandRun.run(shellURL, ["-n"], stdin: script.stdout)
        #expect(check.status == 0, "\(shell) -n: \(check.stderr)")
    }
}
