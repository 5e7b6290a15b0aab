@testable import KVOEngine
import KVOProtocol
import Testing

/// The engine's own spellings of the protocol's names, where its types need
/// literals (raw values), are KVOProtocol's.
@Suite struct ProtocolNamesTests {
    @Test func theEnginesChangeKindsAreTheProtocolsEventKinds() {
        #expect(ChangeKind.allCases.map(\.rawValue) == EventKind.allCases.map(\.rawValue))
    }

    @Test func theEnginesCausesAreTheProtocolsEventCauses() {
        #expect([ChangeCause.disconnect, .ttl].map(\.rawValue) == EventCause.allCases.map(\.rawValue))
    }


    @Test func anErrorReplyCarriesTheProtocolsCode() {
        let codes: [KVOEngineError.Code] = [
            .badJSON, .badRequest, .unknownOp, .notFound, .notAnObject, .notAnArray, .indexOutOfRange, .tooLarge,
            .limitExceeded, .timeout, .compacted, .preconditionFailed, .forbidden, .unavailable, .storageFull,
        ]
        #expect(codes.map(\.rawValue) == ErrorCode.allCases.map(\.rawValue))
        let reply = ReplyEncoder.failure(id: 7, KVOEngineError(.notFound, "gone"))
        #expect(String(decoding: reply, as: UTF8.self)
            == #"{"id":7,"ok":false,"error":{"code":"not_found","message":"gone"}}"# + "\n")
    }
}
