import Foundation
import Testing

/// docs/ARCHITECTURE.md's rule for tests: a suite of async tests takes
/// `.onDedicatedThread` (`DedicatedThreadTrait`). Without it, a parallel run
/// starves the suite's tests behind the synchronous ones that block the
/// cooperative pool's threads, and their deadlines pass.
@Suite struct AsyncSuiteThreadTests {
    @Test func everySuiteWithAsyncTestsRunsOnTheTestThreads() throws {
        let folder = ArchitectureDocumentTests.root.appendingPathComponent("Tests")
        let files = (FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.allObjects ?? [])
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        var suites = 0
        var missing: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            // `@Test`, its arguments, then a function that is `async`.
            guard text.range(of: #"@Test[^{]*?\bfunc\b[^{]*?\basync\b"#, options: .regularExpression) != nil else { continue }
            for declaration in text.components(separatedBy: "\n@Suite").dropFirst() {
                let attribute = declaration.components(separatedBy: " struct ").first ?? declaration
                suites += 1
                if !attribute.contains(".onDedicatedThread") { missing.append(file.lastPathComponent) }
            }
        }
        // About forty suites have async tests: a scan that stopped finding them would pass with none.
        #expect(suites >= 30, "\(suites) suites with async tests found")
        #expect(missing.isEmpty, "suites of async tests without .onDedicatedThread: \(missing)")
    }
}
