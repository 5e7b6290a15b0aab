import KVOValues
import Testing
@testable import KVOEngine

/// Issue 33 item 2 over etcd: a name's spellings map to one etcd key (else
/// two kvods, or one, could hold one object twice), and every key kvod
/// writes reads back as the name it was written for.
@Suite struct ClusterKeysTests {
    let keys = ClusterKeys(prefix: "/kvod/")
    static let (nfc, nfd) = ("caf\u{e9}/\u{1ec7}", "cafe\u{301}/e\u{302}\u{323}")

    @Test func bothSpellingsOfANameAreOneKeyInNFC() {
        #expect(Array(keys.document(Self.nfd).utf8) == Array(keys.document(Self.nfc).utf8))
        #expect(Array(keys.record(Self.nfd).utf8) == Array(keys.record(Self.nfc).utf8))
        #expect(Array(keys.document(Self.nfd).utf8) == Array(("/kvod/o/" + Self.nfc).utf8))
        for family in ClusterKeys.Family.allCases {
            #expect(Array(keys.leased(family, Self.nfd, [Self.nfd, "k"]).utf8)
                == Array(keys.leased(family, Self.nfc, [Self.nfc, "k"]).utf8))
        }
    }

    @Test(arguments: ["plain", "caf\u{e9}", "cafe\u{301}", "\u{301}x", "/\u{301}", "%2F", "a/b\u{308}"])
    func everyKeyReadsBackAsItsName(name: String) {
        #expect(keys.entry(Array(keys.document(name).utf8)) == .document(name))
        #expect(keys.entry(Array(keys.record(name).utf8)) == .record(name))
        for family in ClusterKeys.Family.allCases {
            let key = Array(keys.leased(family, name, [name]).utf8)
            #expect(keys.family(of: key) == family, "\(name.unicodeScalars.map(\.value))")
            #expect(keys.entry(key) == nil)
        }
    }

    /// The leased keys under a key path are the range under its key and `/`,
    /// whichever way either is spelled (a `/` before a combining mark escaped too).
    @Test func theLeasedKeysUnderAKeyPathAreItsKeyAndTheRangeUnderIt() {
        for (object, key) in [(Self.nfc, Self.nfd), (Self.nfd, Self.nfc), ("o/\u{301}", "/\u{301}")] {
            let at = Array(keys.leased(.ttl, CanonicalName.nfc(object), [CanonicalName.nfc(key)]).utf8)
            let under = Array(keys.leased(.ttl, object, [key, "b"]).utf8)
            #expect(under.starts(with: at + [UInt8(ascii: "/")]))
            #expect(at.filter { $0 == UInt8(ascii: "/") }.count == 4)
        }
    }

    /// The record beside an object's NFC key spells the object as the change
    /// did, so that every kvod's events say the name as sent; an NFC name, as
    /// every ASCII one is, needs no member for it.
    @Test func aRecordKeepsTheSpellingOfItsChange() {
        let spelled = ReplicatedChange(op: "set", object: Self.nfd, path: ["k"], kind: .setting)
        let read = ReplicatedChange(object: Self.nfc, json: spelled.json)
        #expect(read?.object.unicodeScalars.elementsEqual(Self.nfd.unicodeScalars) == true)
        #expect(ReplicatedChange(op: "set", object: "o", path: [], kind: .setting).json.member("object") == nil)
        #expect(ReplicatedChange(op: "set", object: Self.nfc, path: [], kind: .setting).json.member("object") == nil)
        // A record whose `object` is another name (written by hand) names the key's object.
        let other: JSONValue = ["op": "set", "path": [], "kind": "setting", "object": "elsewhere"]
        #expect(ReplicatedChange(object: Self.nfc, json: other)?.object == Self.nfc)
    }
}
