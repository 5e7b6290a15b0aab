import KVOEngine
import KVOTestSupport
import Testing

/// Canonically equivalent spellings name one object in memory and one row on
/// disk (docs/DURABILITY.md, "On disk").
@Suite struct CanonicalNameTests {
    static let nfd = "caf\u{65}\u{301}"
    static let nfc = "caf\u{e9}"

    @Test(arguments: [
        // The whole object, spelled differently.
        (#"{"op":"set","object":"\#(nfd)","keyPath":"k","value":1}"#, #"{"op":"delete","object":"\#(nfc)"}"#),
        // One member, the key spelled differently.
        (#"{"op":"set","object":"o","keyPath":"\#(nfd)","value":1}"#,
         #"{"op":"delete","object":"o","keyPath":"\#(nfc)"}"#),
        // A member under another, both keys spelled differently.
        (#"{"op":"set","object":"o","keyPath":"\#(nfd).\#(nfd)","value":1}"#,
         #"{"op":"delete","object":"o","keyPath":"\#(nfc)"}"#),
    ])
    func setInNFDThenDeleteInNFCIsGoneAfterARestart(set: String, delete: String) throws {
        let data = try DataDirectory()
        do {
            let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
            let client = try LineClient(path: kvod.socketPath)
            _ = try client.request(#"{"op":"set","object":"o","keyPath":"kept","value":0}"#)
            #expect(try client.request(set).reply["ok"] == true)
            #expect(try client.request(delete).reply["ok"] == true)
            try kvod.terminate()
        }
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        let client = try LineClient(path: kvod.socketPath)
        #expect(try client.request(#"{"op":"get","object":"\#(Self.nfd)"}"#).reply["error"]?["code"] == "not_found")
        #expect(try client.request(#"{"op":"get","object":"o"}"#).reply["value"] == ["kept": 0])
    }

    @Test func aValueSetThroughBothSpellingsIsTheLastOneAfterARestart() throws {
        let data = try DataDirectory()
        do {
            let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
            let client = try LineClient(path: kvod.socketPath)
            _ = try client.request(#"{"op":"set","object":"\#(Self.nfc)","keyPath":"\#(Self.nfc)","value":1}"#)
            _ = try client.request(#"{"op":"set","object":"\#(Self.nfd)","keyPath":"\#(Self.nfd)","value":2}"#)
            try kvod.terminate()
        }
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        let client = try LineClient(path: kvod.socketPath)
        #expect(try client.request(#"{"op":"get","object":"\#(Self.nfc)"}"#).reply["value"] == [Self.nfc: 2])
        #expect(try client.request(#"{"op":"info"}"#).reply["objects"] == 1)
    }
}
