import KVOValues
@testable import KVOEtcd
import Testing

/// A transaction's body written straight into bytes (EtcdTxn+Body.swift) is
/// the one its `JSONValue` writes, for every kind of compare and operation.
@Suite struct TxnBodyTests {
    @Test func theBodyIsTheJSONOfTheRequestByteForByte() {
        let requests = [
            EtcdTxnRequest(compare: [], success: []),
            EtcdTxnRequest(compare: [.modRevision(of: "/kvod/o/a", is: 0), .modRevision(of: "/kvod/o/é\u{1}", is: 123_456)],
                           success: [.put(EtcdPutRequest("/kvod/o/a", "{\"op\":\"set\"}\n{\"v\":\"x\"}")),
                                     .put(EtcdPutRequest(key: [0, 255, 10], value: []))]),
            EtcdTxnRequest(compare: [EtcdCompare(.prefix("/kvod/e/"), .modRevision(5)),
                                     EtcdCompare(.key("k"), .version(2)),
                                     EtcdCompare(.key("k"), .value([1, 2, 3]))],
                           success: [.put(EtcdPutRequest("/kvod/e/a", "v", lease: 77)),
                                     .put(EtcdPutRequest("/kvod/e/b", "v", prevKV: true)),
                                     .delete(EtcdDeleteRequest(.prefix("/kvod/e/a/"))),
                                     .range(EtcdRangeRequest(.key("k"), limit: 1))],
                           failure: [.range(EtcdRangeRequest(.key("/kvod/o/a"))),
                                     .put(EtcdPutRequest("x", "y"))]),
        ]
        for request in requests {
            #expect(String(decoding: request.body, as: UTF8.self) == request.json.jsonString)
        }
    }
}
