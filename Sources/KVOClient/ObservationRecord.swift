import KVOEngine

/// One of this connection's observations as the daemon holds it (the reply to `observations`).
public struct ObservationRecord: Sendable, Hashable {
    public var object: String
    public var keyPath: String
    public var options: ObservationOptions
    public var context: JSONValue?

    init?(_ value: JSONValue) {
        guard case .object(let members) = value, case .string(let object)? = members["object"],
              case .string(let keyPath)? = members["keyPath"], case .array(let names)? = members["options"]
        else { return nil }
        var options: ObservationOptions = []
        for name in names {
            guard case .string(let text) = name, let option = ObservationOptions(wireName: text) else { return nil }
            options.insert(option)
        }
        self.object = object
        self.keyPath = keyPath
        self.options = options
        context = members["context"]
    }
}
