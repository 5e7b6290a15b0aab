// docs/CLIENT.md's prefix, list and whole-document example: `swift run RegistryExample` with kvod running.
import KVOClient

struct Person: Codable {
    var name: String
}

@main
struct RegistryExample {
    static func main() async throws {
        let connection = try KVOConnection()

        // Services announce themselves under one prefix; list says who is there.
        try await connection.set("services/web", "addr", to: "10.0.0.5:80")
        try await connection.set("services/db", "addr", to: "10.0.0.6:5432")
        print("services:", try await connection.list(prefix: "services/"))

        // Every service: those there now (.initial, in list order), then those that join.
        let services = connection.changes(prefix: "services/", keyPath: "addr", options: [.new, .initial])
        let watcher = Task {
            var seen = 0
            for try await change in services {
                print(change.isInitial ? "present:" : "joined:", change.object, change.new?.jsonString ?? "-")
                seen += 1
                if seen == 3 { break }
            }
        }
        try await connection.set("services/api", "addr", to: "10.0.0.7:443")
        try await watcher.value

        // A whole document: all of it in every change, and where it changed.
        let person = connection.changes(of: "person/1", options: [.new])
        let follower = Task {
            for try await change in person {
                print("person/1 at", change.changedKeyPath ?? "(whole)", "->", change.new?.jsonString ?? "-")
                if change.changedKeyPath == nil { break }
            }
        }
        try await connection.set("person/1", "address.city", to: "Oslo")
        try await connection.setDocument("person/1", to: Person(name: "xsc"))
        try await follower.value
    }
}
