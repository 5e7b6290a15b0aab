import KVOEngine
import Testing

/// An `observe`'s reply is written straight into the output (its seq kept
/// with the epoch's member, encoded once per epoch): the bytes must be those
/// the reply always had, with an id, with compact numbers, and after the
/// epoch changes.
@Suite struct ObserveReplyTests {
    @Test func theReplyIsTheSeqThenTheEpochWithOrWithoutAnIDAndNumbers() {
        let fixture = EngineFixture()
        let client = fixture.makeClient()
        fixture.send(#"{"op":"set","object":"o","keyPath":"k","value":1}"#, from: client)
        let epoch = fixture.engine.epoch
        #expect(fixture.send(#"{"op":"observe","object":"o","keyPath":"a"}"#, from: client).text
            == [#"{"ok":true,"seq":1,"epoch":"\#(epoch)"}"#])
        #expect(fixture.send(#"{"id":"x","op":"observe","object":"o","keyPath":"b"}"#, from: client).text
            == [#"{"id":"x","ok":true,"seq":1,"epoch":"\#(epoch)"}"#])
        #expect(fixture.send(#"{"op":"observe","object":"o","keyPath":"c","compact":true}"#, from: client).text
            == [#"{"ok":true,"seq":1,"epoch":"\#(epoch)","o":3}"#])
        #expect(fixture.send(#"{"id":7,"op":"observe","object":"o","keyPaths":["d","e"],"compact":true}"#,
                             from: client).text
            == [#"{"id":7,"ok":true,"seq":1,"epoch":"\#(epoch)","o":[4,5]}"#])
    }

    @Test func aRestoredOrAdoptedEpochIsTheOneTheReplyNames() throws {
        let fixture = EngineFixture()
        try fixture.engine.restore(SavedState(documents: [:], seq: 0, history: [], epoch: "0000000000000aaa"))
        let client = fixture.makeClient()
        #expect(fixture.send(#"{"op":"observe","object":"o","keyPath":"a"}"#, from: client).text
            == [#"{"ok":true,"seq":0,"epoch":"0000000000000aaa"}"#])
        fixture.engine.adoptEpoch("0000000000000bbb")
        #expect(fixture.send(#"{"op":"observe","object":"o","keyPath":"b"}"#, from: client).text
            == [#"{"ok":true,"seq":0,"epoch":"0000000000000bbb"}"#])
    }
}
