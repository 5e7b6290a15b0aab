// docs/CLIENT.md's KVOController example: `swift run ControllerExample` with kvod running.
import KVOClient

/// Shows a person's name and tags; kept up to date by a KVOController.
final class ProfileViewModel {
    private(set) var name = "?"
    private(set) var tags: [String] = []
    private var kvo: KVOController<ProfileViewModel>?

    /// Observes person/1. Callbacks run on the main queue, one at a time.
    func start(connection: KVOConnection) {
        let kvo = KVOController(observer: self, connection: connection, queue: .main)
        kvo.observe("person/1", keyPath: "name", options: [.new, .initial]) { viewModel, object, change in
            viewModel.name = (try? change.new(as: String.self)) ?? "?"
            print("\(object) name: \(viewModel.name)")
        }
        kvo.observe("person/1", keyPath: "tags", options: [.new, .old], action: ProfileViewModel.tagsChanged)
        self.kvo = kvo  // the view model owns its controller; when it goes, everything is unobserved
    }

    /// An unbound method reference, `ProfileViewModel.tagsChanged`: Swift's selector.
    func tagsChanged(_ change: Change) {
        let values = (try? change.new(as: [String].self)) ?? []
        switch change.kind {
        case .insertion: tags.insert(contentsOf: values, at: change.indexes?.first ?? tags.count)
        case .removal: for index in (change.indexes ?? []).reversed() { tags.remove(at: index) }
        default: tags = values
        }
        print("tags \(change.kind) at \(change.indexes ?? []): \(tags)")
    }
}

@main
struct ControllerExample {
    @MainActor
    static func main() async throws {
        let connection = try KVOConnection()  // $KVOD_SOCKET, else kvod's default socket
        try await connection.delete("person/1")
        let viewModel = ProfileViewModel()
        viewModel.start(connection: connection)
        // kvod sends the events a request causes before its reply, and the main
        // queue runs in order: when each await returns, the callbacks have run.
        try await connection.set("person/1", "name", to: "xsc")
        try await connection.insert("person/1", "tags", ["swift", "kvo", "linux"])
        try await connection.remove("person/1", "tags", at: [1])
        print("shown:", viewModel.name, viewModel.tags)
    }
}
