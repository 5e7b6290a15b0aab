/// Who may read (get, observe) and write (set, delete, insert, remove,
/// replace) which objects: a list of grants, each giving rights on the
/// objects whose name starts with a prefix to a user, a group or anyone.
///
/// Grants only add up; there is no deny. Superusers (root and the daemon's
/// own user) may everything. A daemon without a policy lets everyone who can
/// open the socket do everything; see docs/SECURITY.md. Pure: the daemon
/// loads it (``init(json:superusers:userID:groupID:)``) and the engine asks it
/// once per request.
public struct AccessPolicy: Sendable, Hashable {
    /// What a grant allows.
    public struct Rights: OptionSet, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// `get` and `observe`.
        public static let read = Rights(rawValue: 1 << 0)
        /// `set`, `delete`, `insert`, `remove`, `replace`; with ``read``, `add`.
        public static let write = Rights(rawValue: 1 << 1)
        public static let all: Rights = [.read, .write]

        /// The names used in policy files.
        public static let names: [(String, Rights)] = [("read", .read), ("write", .write)]

        public var description: String {
            let set = Self.names.filter { contains($0.1) }.map(\.0)
            return set.isEmpty ? "nothing" : set.joined(separator: "+")
        }
    }

    /// Whom a grant is for.
    public enum Subject: Sendable, Hashable {
        case user(UInt32)
        /// Members of the group, as primary or supplementary group.
        case group(UInt32)
        /// Every client, also one whose credentials could not be read.
        case anyone
    }

    /// One line of the policy: `subject` may `rights` on every object whose
    /// name starts with `objectPrefix` (`""`: every object), both in NFC.
    public struct Grant: Sendable, Hashable {
        public var subject: Subject
        public var objectPrefix: String
        public var rights: Rights

        public init(_ subject: Subject, objectPrefix: String, rights: Rights) {
            self.subject = subject
            self.objectPrefix = objectPrefix
            self.rights = rights
        }
    }

    public var grants: [Grant]
    /// Users who may everything, whatever the grants: root, and the user the
    /// daemon runs as (it could read its own memory anyway).
    public var superusers: Set<UInt32>

    public init(grants: [Grant], superusers: Set<UInt32> = [0]) {
        self.grants = grants
        self.superusers = superusers
    }

    /// Everything `credentials` may do on `object`.
    public func rights(of credentials: PeerCredentials?, on object: String) -> Rights {
        if let credentials, superusers.contains(credentials.uid) { return .all }
        var rights: Rights = []
        for grant in grants where !rights.isSuperset(of: grant.rights) && grant.applies(to: credentials) {
            // By the one rule for names (``CanonicalName``): the name's NFC bytes start
            // with the prefix's, as for `list` and prefix observations. "a" + U+0301 is
            // "á" and not under "a"; "x" + U+0301, which has no composed form, is.
            if CanonicalName.hasPrefix(object, grant.objectPrefix) { rights.formUnion(grant.rights) }
        }
        return rights
    }

    /// Whether `credentials` may read every object (a superuser, or a grant
    /// of `read` on the prefix `""`): what decides whether figures about
    /// all values (sizes in `info`, in a memory refusal) may be told.
    public func readsEverything(_ credentials: PeerCredentials?) -> Bool {
        if let credentials, superusers.contains(credentials.uid) { return true }
        return grants.contains { $0.objectPrefix.isEmpty && $0.rights.contains(.read) && $0.applies(to: credentials) }
    }

    /// Whether `credentials` may do all of `rights` on `object`.
    public func allows(_ rights: Rights, on object: String, for credentials: PeerCredentials?) -> Bool {
        self.rights(of: credentials, on: object).isSuperset(of: rights)
    }
}

extension AccessPolicy.Grant {
    func applies(to credentials: PeerCredentials?) -> Bool {
        switch subject {
        case .anyone: true
        case .user(let uid): credentials?.uid == uid
        case .group(let gid): credentials?.isMember(of: gid) == true
        }
    }
}
