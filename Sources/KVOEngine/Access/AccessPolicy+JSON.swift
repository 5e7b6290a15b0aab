import KVOValues

/// The policy file format (docs/SECURITY.md):
///
///     {"grants": [
///       {"user": "www-data", "prefix": "web/", "allow": ["read", "write"]},
///       {"gid": 100, "prefix": "", "allow": ["read"]},
///       {"anyone": true, "prefix": "public/", "allow": ["read"]},
///       {"user": "backup", "prefix": "", "allow": ["backup"]}
///     ]}
///
/// Each grant names exactly one subject (`uid`, `gid`, `user`, `group`, or
/// `"anyone": true`), a `prefix` and a non-empty `allow`. Anything else is an
/// error, so that a misspelt field never grants or withholds silently; so is
/// `backup` under a prefix other than `""` (a backup holds every object).
extension AccessPolicy {
    /// Why a policy file was refused.
    public struct FormatError: Error, Sendable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Reads a policy file. `userID` and `groupID` resolve `user` and `group`
    /// names (the daemon asks the system's user database).
    public init(json bytes: some Collection<UInt8>, superusers: Set<UInt32>,
                userID: (String) -> UInt32?, groupID: (String) -> UInt32?) throws(FormatError) {
        let document: JSONValue
        do {
            document = try JSONReader.parse(bytes)
        } catch {
            throw FormatError("not JSON: \(error.message)")
        }
        guard case .object(let top) = document else { throw FormatError("the policy must be a JSON object") }
        if let unknown = top.keys.first(where: { $0 != "grants" }) { throw FormatError("unknown field \"\(unknown)\"") }
        guard case .array(let list)? = top["grants"] else { throw FormatError("\"grants\" must be an array") }
        var grants: [Grant] = []
        for (index, entry) in list.enumerated() {
            do throws(FormatError) {
                grants.append(try Self.grant(entry, userID: userID, groupID: groupID))
            } catch {
                throw FormatError("grant \(index + 1): \(error.description)")
            }
        }
        self.init(grants: grants, superusers: superusers)
    }

    private static let subjectFields = ["uid", "gid", "user", "group", "anyone"]

    private static func grant(_ entry: JSONValue, userID: (String) -> UInt32?,
                              groupID: (String) -> UInt32?) throws(FormatError) -> Grant {
        guard case .object(let members) = entry else { throw FormatError("must be an object") }
        if let unknown = members.keys.first(where: { !subjectFields.contains($0) && $0 != "prefix" && $0 != "allow" }) {
            throw FormatError("unknown field \"\(unknown)\"")
        }
        let named = members.keys.filter(subjectFields.contains)
        guard named.count == 1, let field = named.first else {
            throw FormatError("needs exactly one of \"uid\", \"gid\", \"user\", \"group\", \"anyone\"")
        }
        let subject = try subject(field, members[field]!, userID: userID, groupID: groupID)
        guard case .string(let prefix)? = members["prefix"] else {
            throw FormatError("\"prefix\" must be a string (\"\" for every object)")
        }
        guard case .array(let names)? = members["allow"], !names.isEmpty else {
            throw FormatError("\"allow\" must be a non-empty array of \"read\", \"write\", \"backup\"")
        }
        var rights: Rights = []
        for name in names {
            guard case .string(let text) = name, let right = Rights.names.first(where: { $0.0 == text }) else {
                throw FormatError("\"allow\": unknown right \(name.jsonString)")
            }
            rights.formUnion(right.1)
        }
        if rights.contains(.backup), !prefix.isEmpty {
            throw FormatError("\"backup\" copies every object, so its grant's \"prefix\" must be \"\" (not \(JSONValue.string(prefix).jsonString))")
        }
        return Grant(subject, objectPrefix: prefix, rights: rights)
    }

    private static func subject(_ field: String, _ value: JSONValue, userID: (String) -> UInt32?,
                                groupID: (String) -> UInt32?) throws(FormatError) -> Subject {
        switch (field, value) {
        case ("anyone", .bool(true)):
            return .anyone
        case ("uid", .number(let number)), ("gid", .number(let number)):
            guard let id = UInt32(number.literal) else { throw FormatError("\"\(field)\" must be an id from 0 to 4294967295") }
            return field == "uid" ? .user(id) : .group(id)
        case ("user", .string(let name)):
            guard let id = userID(name) else { throw FormatError("no user named \"\(name)\"") }
            return .user(id)
        case ("group", .string(let name)):
            guard let id = groupID(name) else { throw FormatError("no group named \"\(name)\"") }
            return .group(id)
        case ("anyone", _):
            throw FormatError("\"anyone\" must be true")
        default:
            throw FormatError("\"\(field)\" must be a \(field == "user" || field == "group" ? "name" : "number")")
        }
    }
}
