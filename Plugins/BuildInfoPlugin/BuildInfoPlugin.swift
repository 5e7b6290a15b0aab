import Foundation
import PackagePlugin

/// Generates the KVOBuildInfo target's version and commit with
/// `scripts/build-info.sh`. A build command, not a prebuild one: SwiftPM runs
/// a plugin only when it plans the build, and reuses that plan while the
/// package is unchanged, so the command names git's files as its inputs and
/// llbuild runs it again whenever one changes (a commit, a checkout, a tag).
@main
struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        let script = package.appending(path: "scripts/build-info.sh")
        let output = context.pluginWorkDirectoryURL.appending(path: "BuildInfo+Generated.swift")
        return [.buildCommand(
            displayName: "Reading kvod's version and commit from git",
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: [script.path, output.path],
            inputFiles: [script] + gitFiles(of: package),
            outputFiles: [output])]
    }

    /// What changes with the version: HEAD (a checkout), its reflog (a commit,
    /// a reset), the tags (loose and packed). Only those that exist now: a
    /// missing input fails the build. None outside a git checkout.
    private func gitFiles(of package: URL) -> [URL] {
        guard let output = run("/usr/bin/git", ["-C", package.path, "rev-parse", "--absolute-git-dir", "--git-common-dir"]),
              case let lines = output.split(separator: "\n").map(String.init), lines.count == 2 else { return [] }
        let gitDirectory = URL(fileURLWithPath: lines[0])
        let common = URL(fileURLWithPath: lines[1], relativeTo: package).standardizedFileURL
        return [gitDirectory.appending(path: "HEAD"), gitDirectory.appending(path: "logs/HEAD"),
                common.appending(path: "refs/tags"), common.appending(path: "packed-refs")]
            .filter { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// The program's standard output, or nil if it could not run or failed.
    private func run(_ executable: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
