import KVOProtocol
import Testing

/// Each literal piece the daemon's hot paths append is the names of
/// KVOProtocol put together: spelled as a literal for speed, checked here.
@Suite struct LineFragmentTests {
    private func text(_ fragment: StaticString) -> String { fragment.description }
    private func quoted(_ name: String) -> String { "\"\(name)\"" }
    private func member(_ field: Field) -> String { "," + quoted(field.rawValue) + ":" }

    @Test func replyPiecesAreMadeOfTheFieldNames() {
        #expect(text(LineFragment.idMember) == quoted(Field.id.rawValue) + ":")
        #expect(text(LineFragment.idStart) == "{" + text(LineFragment.idMember))
        #expect(text(LineFragment.okTrue) == quoted(Field.ok.rawValue) + ":true")
        #expect(text(LineFragment.okTrueStart) == "{" + text(LineFragment.okTrue))
        #expect(text(LineFragment.okTrueAfterID) == "," + text(LineFragment.okTrue))
        #expect(text(LineFragment.okTrueSeqStart) == text(LineFragment.okTrueStart) + text(LineFragment.seqMember))
        #expect(text(LineFragment.failureCode)
            == quoted(Field.ok.rawValue) + ":false" + member(.error) + "{" + quoted(Field.code.rawValue) + ":")
        #expect(text(LineFragment.messageMember) == member(.message))
        #expect(text(LineFragment.epochMember) == member(.epoch))
    }

    @Test func eventPiecesAreMadeOfTheFieldKindAndCauseNames() {
        #expect(text(LineFragment.changeEventStart)
            == "{" + quoted(Field.event.rawValue) + ":" + quoted(EventType.change.rawValue) + member(.object))
        #expect(text(LineFragment.compactEventStart) == "{" + quoted(Field.observation.rawValue) + ":")
        #expect(text(LineFragment.objectMember) == member(.object))
        #expect(text(LineFragment.prefixMember) == member(.prefix))
        #expect(text(LineFragment.keyPathMember) == member(.keyPath))
        #expect(text(LineFragment.settingWithNew) == member(.kind) + quoted(EventKind.setting.rawValue) + member(.new))
        #expect(text(LineFragment.kindSetting) == member(.kind) + quoted(EventKind.setting.rawValue))
        #expect(text(LineFragment.kindInsertion) == member(.kind) + quoted(EventKind.insertion.rawValue))
        #expect(text(LineFragment.kindRemoval) == member(.kind) + quoted(EventKind.removal.rawValue))
        #expect(text(LineFragment.kindReplacement) == member(.kind) + quoted(EventKind.replacement.rawValue))
        #expect(text(LineFragment.priorTrue) == member(.prior) + "true")
        #expect(text(LineFragment.initialTrue) == member(.initial) + "true")
        #expect(text(LineFragment.newMember) == member(.new))
        #expect(text(LineFragment.oldMember) == member(.old))
        #expect(text(LineFragment.indexesStart) == member(.indexes) + "[")
        #expect(text(LineFragment.changedKeyPathMember) == member(.changedKeyPath))
        #expect(text(LineFragment.causeDisconnect) == member(.cause) + quoted(EventCause.disconnect.rawValue))
        #expect(text(LineFragment.causeTTL) == member(.cause) + quoted(EventCause.ttl.rawValue))
        #expect(text(LineFragment.resyncTrue) == member(.resync) + "true")
        #expect(text(LineFragment.contextMember) == member(.context))
        #expect(text(LineFragment.coalescedMember) == member(.coalesced))
        #expect(text(LineFragment.seqMember) == member(.seq))
    }
}
