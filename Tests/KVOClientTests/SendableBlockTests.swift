import Foundation
import KVOTestSupport
import Testing

/// `KVOController.Block` is `@Sendable`: the compiler, not luck, keeps a block
/// away from main-actor state it would touch from the controller's queue.
/// Each case type-checks a few lines against the KVOClient module this build made.
@Suite(.onDedicatedThread) struct SendableBlockTests {
    static let model = """
        import KVOClient
        @MainActor final class StatusModel {
            var status = "?"
            var kvo: KVOController<StatusModel>?
            func start(_ connection: KVOConnection) {
                let kvo = KVOController(observer: self, connection: connection, queue: .main)
                kvo.observe("printer/1", keyPath: "status", options: [.new]) { model, _, change in
                    BODY
                }
                self.kvo = kvo
            }
        }
        """

    func typeCheck(_ body: String) throws -> CommandRun {
        let directory = try TemporaryDirectory()
        let file = URL(fileURLWithPath: directory.path).appendingPathComponent("snippet.swift")
        try Self.model.replacingOccurrences(of: "BODY", with: body).write(to: file, atomically: true, encoding: .utf8)
        let modules = KVODProcess.productsDirectory.appendingPathComponent("Modules").path
        return try CommandRun.run(URL(fileURLWithPath: "/usr/bin/env"),
                                  ["swiftc", "-swift-version", "6", "-typecheck", "-I", modules, file.path])
    }

    @Test func aBlockThatTouchesMainActorStateDirectlyDoesNotCompile() throws {
        let run = try typeCheck(#"model.status = (try? change.new(as: String.self)) ?? "?""#)
        #expect(run.status != 0)
        #expect(run.stderr.contains("can not be mutated from a Sendable closure"), "\(run.stderr)")
    }

    @Test func theGuidesFormWithAssumeIsolatedCompilesWithoutAWarning() throws {
        let run = try typeCheck(#"MainActor.assumeIsolated { model.status = (try? change.new(as: String.self)) ?? "?" }"#)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.stderr.contains("warning:"), "\(run.stderr)")
    }
}
