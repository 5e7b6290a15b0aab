import KVOEngine
import KVOValues
import Testing

/// The one default-socket rule shared by kvod, KVOClient and kvoctl.
@Suite struct DefaultSocketPathTests {
    @Test func resolveFollowsEnvironmentThenUidThenRuntimeDirectory() {
        #expect(DefaultSocketPath.resolve(environment: ["KVOD_SOCKET": "/x.sock"], uid: 0) == "/x.sock")
        #expect(DefaultSocketPath.resolve(environment: ["KVOD_SOCKET": ""], uid: 0) == "/run/kvod/kvod.sock")
        #expect(DefaultSocketPath.resolve(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: 1000)
            == "/run/user/1000/kvod.sock")
        #expect(DefaultSocketPath.resolve(environment: [:], uid: 1000) == "/tmp/kvod-1000/kvod.sock")
    }

    @Test func clientFallsBackToTheSystemSocketWhenItsOwnIsMissing() {
        let environment = ["XDG_RUNTIME_DIR": "/run/user/1000"]
        let onlySystem: (String) -> Bool = { $0 == DefaultSocketPath.system }
        let both: (String) -> Bool = { _ in true }
        let none: (String) -> Bool = { _ in false }
        #expect(DefaultSocketPath.resolveForClient(environment: environment, uid: 1000, fileExists: onlySystem)
            == "/run/kvod/kvod.sock")
        #expect(DefaultSocketPath.resolveForClient(environment: environment, uid: 1000, fileExists: both)
            == "/run/user/1000/kvod.sock")
        #expect(DefaultSocketPath.resolveForClient(environment: environment, uid: 1000, fileExists: none)
            == "/run/user/1000/kvod.sock")
        // An explicit $KVOD_SOCKET is never second-guessed.
        #expect(DefaultSocketPath.resolveForClient(environment: ["KVOD_SOCKET": "/mine.sock"], uid: 1000,
                                                   fileExists: onlySystem) == "/mine.sock")
    }

    @Test func onlyANonEmptyKVODSocketIsAChosenPath() {
        #expect(DefaultSocketPath.isChosen(environment: ["KVOD_SOCKET": "/x.sock"]))
        #expect(!DefaultSocketPath.isChosen(environment: ["KVOD_SOCKET": ""]))
        #expect(!DefaultSocketPath.isChosen(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]))
    }
}
