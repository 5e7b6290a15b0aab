@testable import KVOEngine
import KVOProtocol
import Testing

/// The request members the decoder knows (``RequestMember``): each named by
/// its own ``Field``, found by its bytes, and nothing else found.
@Suite struct RequestMemberTests {
    private func member(_ name: String) -> RequestMember? {
        Array(name.utf8).withUnsafeBytes { RequestMember(plain: $0) }
    }

    @Test func everyMemberIsNamedByTheFieldOfItsName() {
        #expect(RequestMember.allCases.count <= 64, "a member is a bit of a UInt64")
        #expect(Set(RequestMember.allCases.map(\.field)).count == RequestMember.allCases.count)
        for member in RequestMember.allCases {
            // `await` is a Swift keyword: the member's case says `awaiting`.
            let caseName = member == .awaiting ? Field.await.rawValue : "\(member)"
            #expect(member.name == caseName, "\(member) is named \(member.name)")
        }
    }

    @Test func everyMemberIsFoundByItsNameAndOnlyByIt() {
        let names = Set(RequestMember.allCases.map(\.name))
        for member in RequestMember.allCases {
            #expect(self.member(member.name) == member)
            #expect(RequestMember(.decoded(member.name)) == member)
            #expect(self.member(member.name + "x") == nil)
            #expect(self.member(member.name.uppercased()) == nil)
            // `keyPaths` shortened is `keyPath`, a member too.
            let shorter = String(member.name.dropLast())
            #expect(self.member(shorter) == RequestMember.allCases.first { $0.name == shorter })
        }
        for field in Field.allCases where !names.contains(field.rawValue) {
            #expect(member(field.rawValue) == nil, "\(field.rawValue) is no request member")
        }
        #expect(member("") == nil)
        #expect(member("awaitTimeoutAndMore!") == nil)
    }

    /// Each member's value is kept where ``Fields`` gives it back: a member
    /// added without a slot of its own would trap here.
    @Test func everyMemberReadIsKeptUnderItsOwnName() {
        var fields = Fields()
        for member in RequestMember.allCases {
            fields.assign(member, .string(member.name))
        }
        #expect(fields.id == RequestID(.string("id")))
        #expect(fields.object == .string("object"))
        #expect(fields.keyPath == .string("keyPath"))
        #expect(fields.value == .string("value"))
        for member in RequestMember.allCases where ![.id, .object, .keyPath, .value].contains(member) {
            #expect(fields[member] == .string(member.name), "\(member)")
        }
    }
}
