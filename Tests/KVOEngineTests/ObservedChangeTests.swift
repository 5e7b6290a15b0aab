import KVOValues
import Testing
@_spi(Benchmarks) @testable import KVOEngine

/// What one event says to one observation (``ObservedChange``), for each
/// option and each place of the observed key path around the changed one.
@Suite struct ObservedChangeTests {
    let shared = SharedController(objects: ObjectTable())

    private static func change(_ path: [String], _ kind: ChangeKind = .setting, indexes: [Int] = [],
                               old: JSONValue?, new: JSONValue?, cause: ChangeCause? = nil) -> ChangeRecord {
        ChangeRecord(object: "o", path: path, kind: kind, indexes: indexes, old: old, new: new, seq: 7,
                     existingKeys: path.count, cause: cause)
    }

    /// The event's fields as they go on the wire (the head aside), parsed.
    private static func fields(_ event: ObservedChange) -> JSONValue {
        var bytes: [UInt8] = []
        EventEncoder.write(event, head: Array(#"{"event":"change""#.utf8), to: &bytes)
        return (try? JSONReader.parse(bytes.dropLast())) ?? .null
    }

    private static func fields(_ change: ChangeRecord, _ relation: ObservedChange.Relation = .exact,
                               old: JSONValue? = nil, new: JSONValue? = nil, options: ObservationOptions,
                               prior: Bool = false) -> JSONValue {
        let exact = relation.isExact
        return fields(ObservedChange(change, relation, old: exact ? change.old : old, new: exact ? change.new : new,
                                     options: options, prior: prior))
    }

    @Test func aSettingSeenWithNewCarriesKindNewAndSeqOnlyAndIsThePlainSetting() {
        let change = Self.change(["a"], old: 1, new: 2)
        expectJSON(Self.fields(change, options: .new), ["event": "change", "kind": "setting", "new": 2, "seq": 7])
        #expect(ObservedChange.isPlainSetting(change, .exact, options: .new, prior: false))
        #expect(!ObservedChange.isPlainSetting(change, .exact, options: [.new, .old], prior: false))
        #expect(!ObservedChange.isPlainSetting(change, .exact, options: .new, prior: true))
        #expect(!ObservedChange.isPlainSetting(change, .ancestor, options: .new, prior: false))
        #expect(!ObservedChange.isPlainSetting(Self.change(["a"], old: 1, new: nil, cause: .ttl), .exact,
                                               options: .new, prior: false))
    }

    @Test func thePlainSettingsShortcutWritesTheSameBytesAsItsFields() {
        let change = Self.change(["a"], old: 1, new: ["x": [true, "y"]])
        let head = EventEncoder.head(object: "o", keyPath: "a")
        var shortcut: [UInt8] = []
        EventEncoder.setting(into: &shortcut, head: head, new: change.new, seq: change.seq)
        var written: [UInt8] = []
        EventEncoder.write(ObservedChange(change, .exact, old: change.old, new: change.new, options: .new, prior: false),
                           head: head, to: &written)
        #expect(shortcut == written)
    }

    @Test func oldAddsTheValueBeforeAndAMissingValueIsNull() {
        let created = Self.change(["a"], old: nil, new: 1)
        expectJSON(Self.fields(created, options: [.new, .old]),
                   ["event": "change", "kind": "setting", "new": 1, "old": .null, "seq": 7])
        expectJSON(Self.fields(created, options: .old), ["event": "change", "kind": "setting", "old": .null, "seq": 7])
        expectJSON(Self.fields(created, options: []), ["event": "change", "kind": "setting", "seq": 7])
    }

    @Test func aPriorEventCarriesOldButNeverNew() {
        let change = Self.change(["a"], old: 1, new: 2)
        expectJSON(Self.fields(change, options: [.new, .old, .prior], prior: true),
                   ["event": "change", "kind": "setting", "prior": true, "old": 1, "seq": 7])
        expectJSON(Self.fields(change, options: [.new, .prior], prior: true),
                   ["event": "change", "kind": "setting", "prior": true, "seq": 7])
    }

    @Test func theCollectionKindsCarryIndexesAnInsertionNoOldAndARemovalNoNew() {
        let options: ObservationOptions = [.new, .old]
        expectJSON(Self.fields(Self.change(["l"], .insertion, indexes: [1, 2], old: nil, new: ["x", "y"]),
                               options: options),
                   ["event": "change", "kind": "insertion", "new": ["x", "y"], "indexes": [1, 2], "seq": 7])
        expectJSON(Self.fields(Self.change(["l"], .removal, indexes: [0], old: ["x"], new: nil), options: options),
                   ["event": "change", "kind": "removal", "old": ["x"], "indexes": [0], "seq": 7])
        expectJSON(Self.fields(Self.change(["l"], .replacement, indexes: [3], old: ["x"], new: ["z"]),
                               options: options),
                   ["event": "change", "kind": "replacement", "new": ["z"], "old": ["x"], "indexes": [3], "seq": 7])
    }

    @Test func anAncestorOrDescendantSeesASettingThatNamesTheChangedKeyPathWithoutIndexes() {
        let insertion = Self.change(["a", "l"], .insertion, indexes: [0], old: nil, new: ["x"])
        expectJSON(Self.fields(insertion, .ancestor, old: ["l": []], new: ["l": ["x"]], options: [.new, .old]),
                   ["event": "change", "kind": "setting", "new": ["l": ["x"]], "old": ["l": []],
                    "changedKeyPath": "a.l", "seq": 7])
        let setting = Self.change(["a"], old: ["b": 1], new: ["b": 2])
        expectJSON(Self.fields(setting, .descendant(depth: 1), old: 1, new: 2, options: .new),
                   ["event": "change", "kind": "setting", "new": 2, "changedKeyPath": "a", "seq": 7])
    }

    @Test func aChangeOfTheWholeDocumentNamesNoChangedKeyPath() {
        let deletion = Self.change([], old: ["a": 1], new: nil)
        expectJSON(Self.fields(deletion, .descendant(depth: 1), old: 1, new: nil, options: [.new, .old]),
                   ["event": "change", "kind": "setting", "new": .null, "old": 1, "seq": 7])
    }

    @Test func kvodsOwnChangeCarriesItsCauseOnEveryEvent() {
        let expired = Self.change(["a", "b"], old: 1, new: nil, cause: .ttl)
        expectJSON(Self.fields(expired, options: .new),
                   ["event": "change", "kind": "setting", "new": .null, "cause": "ttl", "seq": 7])
        expectJSON(Self.fields(expired, .ancestor, old: ["b": 1], new: [:], options: .old),
                   ["event": "change", "kind": "setting", "old": ["b": 1], "changedKeyPath": "a.b", "cause": "ttl",
                    "seq": 7])
    }

    @Test func anInitialEventCarriesTheValueNowOnlyWhenNewIsAsked() {
        expectJSON(Self.fields(ObservedChange(initialValue: 3, options: [.new, .old, .initial], seq: 4)),
                   ["event": "change", "kind": "setting", "initial": true, "new": 3, "seq": 4])
        expectJSON(Self.fields(ObservedChange(initialValue: nil, options: [.new, .initial], seq: 4)),
                   ["event": "change", "kind": "setting", "initial": true, "new": .null, "seq": 4])
        expectJSON(Self.fields(ObservedChange(initialValue: 3, options: [.old, .initial], seq: 4)),
                   ["event": "change", "kind": "setting", "initial": true, "seq": 4])
    }

    @Test func aKeyPathIsTheChangedOneAboveItUnderItOrUntouched() {
        let change = Self.change(["a", "b"], old: nil, new: 1)
        #expect(ObservedChange.relation(of: ["a", "b"], to: change) == .exact)
        #expect(ObservedChange.relation(of: ["a"], to: change) == .ancestor)
        #expect(ObservedChange.relation(of: [], to: change) == .ancestor)
        #expect(ObservedChange.relation(of: ["a", "b", "c", "d"], to: change) == .descendant(depth: 2))
        #expect(ObservedChange.relation(of: ["a", "c"], to: change) == nil)
        #expect(ObservedChange.relation(of: ["x"], to: change) == nil)
    }

    @Test func valuesAfterTheFactReadAnAncestorsDocumentAndUndoItsOldOnlyWhenAsked() {
        let change = Self.change(["a", "b"], old: 1, new: 2)
        let node = shared.nodeCreating(.object("o"), keyPath("a"))
        var reads: [[String]] = []
        let values = ObservedChange.values(of: change, at: node, .ancestor, wantsOld: true) { keys in
            reads.append(keys)
            return ["b": 2, "c": 3]
        }
        #expect(values.new == ["b": 2, "c": 3])
        #expect(values.old == ["b": 1, "c": 3])
        #expect(reads == [["a"]])
        #expect(ObservedChange.values(of: change, at: node, .ancestor, wantsOld: false) { _ in ["b": 2] }.old == nil)
    }

    @Test func valuesUnderAReplacedValueAreItsPartsAndNothingLiesUnderAnArray() {
        let setting = Self.change(["a"], old: ["b": ["c": 1]], new: ["b": ["c": 2]])
        let node = shared.nodeCreating(.object("o"), keyPath("a.b.c"))
        let values = ObservedChange.values(of: setting, at: node, .descendant(depth: 2), wantsOld: true) { _ in nil }
        #expect(values.old == 1 && values.new == 2)
        let insertion = Self.change(["a"], .insertion, indexes: [0], old: nil, new: [1])
        let none = ObservedChange.values(of: insertion, at: node, .descendant(depth: 2), wantsOld: true) { _ in nil }
        #expect(none.old == nil && none.new == nil)
    }

    @Test func valuesOfAComputedKeyPathAreEvaluatedOverTheArrayBeforeAndAfter() {
        let node = shared.nodeCreating(.object("o"), keyPath("tags.@count"))
        let insertion = Self.change(["tags"], .insertion, indexes: [1], old: nil, new: ["y"])
        let values = ObservedChange.values(of: insertion, at: node, .descendant(depth: 1), wantsOld: true) { keys in
            keys == ["tags"] ? ["x", "y"] : nil
        }
        #expect(values.old == 1 && values.new == 2)
        let setting = Self.change(["tags"], old: ["x"], new: ["x", "y", "z"])
        let set = ObservedChange.values(of: setting, at: node, .descendant(depth: 1), wantsOld: true) { _ in nil }
        #expect(set.old == 1 && set.new == 3)
    }

    @Test func aPrefixObservationsEventNamesTheChangedObjectAndThePrefix() {
        let node = shared.nodeCreating(.prefix("svc/"), keyPath("addr"))
        let head = String(decoding: node.head(forObject: "svc/web"), as: UTF8.self)
        #expect(head == #"{"event":"change","object":"svc/web","prefix":"svc/","keyPath":"addr""#)
        let document = shared.nodeCreating(.object("o"), .wholeDocument)
        #expect(String(decoding: document.eventHead, as: UTF8.self) == #"{"event":"change","object":"o""#)
    }
}
