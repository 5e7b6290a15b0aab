/// How a kvod client spells its requests: the same requests, as different
/// clients write them. kvod must be as fast for each (issue 16); Redis has
/// one spelling, RESP, whatever the client.
enum ClientShape: String, CaseIterable, Sendable {
    /// KVOClient's and kvoctl's: `{"op":"set","object":…,"keyPath":…,"value":…}`, no id, no space.
    case kvoclient
    /// A line typed into socat, as docs/PROTOCOL.md shows them: `{"id":N,"op":"set",…}`.
    case idFirst = "id-first"
    /// Python's `json.dumps`: a space after every `:` and `,`, the id last:
    /// `{"op": "set", "object": …, "value": …, "id": N}`.
    case jsonDumps = "json-dumps"

    /// How a report's rows name the shape.
    var label: String {
        switch self {
        case .kvoclient: "KVOClient's lines"
        case .idFirst: "socat-style lines, id first"
        case .jsonDumps: "Python json.dumps lines"
        }
    }

    /// What a scenario's name gets for this shape (none for KVOClient's, whose names predate the shapes).
    var nameSuffix: String { self == .kvoclient ? "" : "-" + rawValue }

    /// What a report row gets for this shape (none for KVOClient's: its rows keep their names across runs).
    var rowSuffix: String { self == .kvoclient ? "" : ", " + label }
}
