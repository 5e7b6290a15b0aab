import KVOValues
import KVOProtocol

extension RequestEncoder {
    /// Adds `"<field>":<value>`, the value as the engine's writer spells it
    /// (numbers digit for digit, large integers included).
    mutating func value(_ field: Field, _ value: JSONValue) {
        json(field, value.jsonBytes)
    }
}
