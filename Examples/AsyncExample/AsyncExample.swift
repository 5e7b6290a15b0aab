// docs/CLIENT.md's async/await example: `swift run AsyncExample` with kvod running.
import KVOClient

struct Address: Codable {
    var city: String
    var zip: String
}

@main
struct AsyncExample {
    static func main() async throws {
        let connection = try KVOConnection()  // $KVOD_SOCKET, else kvod's default socket
        try await connection.set("person/1", "name", to: "xz")

        // The current value first (.initial), then every change, until the loop ends.
        let changes = connection.changes(of: "person/1", keyPath: "name", options: [.new, .old, .initial])
        let watcher = Task {
            for try await change in changes {
                print("name:", change.old?.jsonString ?? "-", "->", change.new?.jsonString ?? "-")
                if change.new == "xsc" { break }  // leaving the loop unobserves
            }
        }
        try await connection.set("person/1", "name", to: "xsc")
        try await watcher.value

        // Codable values in and out.
        try await connection.set("person/1", "address", to: Address(city: "Oslo", zip: "0150"))
        let address = try await connection.get(Address.self, "person/1", "address")
        print("city:", address.city)

        // The daemon's errors are typed, with the protocol's code.
        do {
            _ = try await connection.get(Int.self, "person/1", "age")
        } catch {
            print("age:", error.code, "-", error.message)
        }
    }
}
