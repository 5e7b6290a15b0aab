import KVOProtocol
import OrderedCollections

/// JSON objects whose member names are KVOProtocol's (``MemberName``): replies'
/// members, `info`'s nested figures and errors' details are written and read
/// through these, no name spelled as a literal outside KVOProtocol.
extension OrderedDictionary where Key == String, Value == JSONValue {
    /// An object of `members`, in their order.
    public init<Name: MemberName>(_ members: KeyValuePairs<Name, JSONValue>) {
        self.init(uniqueKeysWithValues: members.map { ($0.key.rawValue, $0.value) })
    }

    /// The member named `name`.
    public subscript<Name: MemberName>(_ name: Name) -> JSONValue? {
        get { self[name.rawValue] }
        set { self[name.rawValue] = newValue }
    }

    /// The member a reply or event names by one of the protocol's fields:
    /// `reply[.seq]`.
    public subscript(_ field: KVOProtocol.Field) -> JSONValue? {
        get { self[field.rawValue] }
        set { self[field.rawValue] = newValue }
    }

    /// The member `field` as a non-negative integer (a seq, a size, a count); nil when it is not one.
    public func unsigned(_ field: KVOProtocol.Field) -> UInt64? {
        if case .number(let number)? = self[field] { UInt64(number.literal) } else { nil }
    }

    /// The member `field` as an `Int`; nil when it is not one.
    public func integer(_ field: KVOProtocol.Field) -> Int? {
        if case .number(let number)? = self[field] { number.intValue } else { nil }
    }
}
