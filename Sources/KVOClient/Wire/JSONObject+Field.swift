import KVOEngine
import KVOProtocol
import OrderedCollections

extension OrderedDictionary where Key == String, Value == JSONValue {
    /// The member a reply or event names by one of the protocol's fields:
    /// `reply[.seq]`, spelled once in KVOProtocol.
    subscript(_ field: Field) -> JSONValue? {
        get { self[field.rawValue] }
        set { self[field.rawValue] = newValue }
    }
}
