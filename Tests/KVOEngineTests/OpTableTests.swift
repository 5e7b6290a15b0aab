@testable import KVOEngine
import KVOProtocol
import Testing

/// A request of each op with its required members, as (name, JSON) pairs after `op`.
private let samples: [Op: [(String, String)]] = [
    .set: [("object", #""o""#), ("keyPath", #""a""#), ("value", "1")],
    .get: [("object", #""o""#)],
    .delete: [("object", #""o""#)],
    .insert: [("object", #""o""#), ("keyPath", #""a""#), ("value", "1")],
    .remove: [("object", #""o""#), ("keyPath", #""a""#), ("index", "0")],
    .replace: [("object", #""o""#), ("keyPath", #""a""#), ("index", "0"), ("value", "1")],
    .add: [("object", #""o""#), ("keyPath", #""a""#), ("by", "1")],
    .observe: [("object", #""o""#)],
    .unobserve: [("object", #""o""#)],
    .unobserveAll: [], .ping: [], .info: [], .observations: [], .list: [], .metrics: [], .backup: [],
    .batch: [("ops", #"[{"op":"set","object":"o","value":{}}]"#)],
    .ack: [("seq", "0")],
]

private func line(_ op: Op, _ members: [(String, String)]) -> String {
    "{" + ([("op", "\"\(op.rawValue)\"")] + members).map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
}

private func decode(_ line: String) -> RequestDecoder.Outcome {
    Array(line.utf8).withUnsafeBytes { RequestDecoder.decode($0) }
}

/// The table of ops (``OpSpec``): a row for every op, and rows that say what the decoder and engine do.
@Suite struct OpTableTests {
    @Test func everyOpHasItsRowAtItsOrdinal() {
        #expect(OpSpec.table.count == Op.allCases.count)
        for (position, op) in Op.allCases.enumerated() {
            #expect(op.ordinal == position, "\(op)")
            #expect(OpSpec.table[position].op == op)
            #expect(samples[op] != nil, "no sample request of \(op)")
        }
    }

    @Test func everyOpNameRoundTrips() {
        for op in Op.allCases {
            let name = Array(op.rawValue.utf8)
            #expect(name.withUnsafeBytes { Op(plainName: $0) } == op)
            #expect(Op(.decoded(op.rawValue)) == op)
            #expect((name + [0x78]).withUnsafeBytes { Op(plainName: $0) } == nil)
            #expect(name.dropLast().withUnsafeBytes { Op(plainName: $0) } == nil)
            guard case .request(let request) = decode(line(op, samples[op] ?? [])) else {
                Issue.record("the sample \(op) does not decode")
                continue
            }
            #expect(request.operation.op == op)
        }
        #expect([UInt8]().withUnsafeBytes { Op(plainName: $0) } == nil)
    }

    @Test func everyChangeIsReplicatedAndNeedsToWrite() {
        for spec in OpSpec.table {
            #expect(spec.replicated == spec.changesState, "\(spec.op)")
            if spec.changesState {
                #expect([.write, .readAndWrite, .eachOp].contains(spec.access), "\(spec.op)")
                #expect(spec.members.contains(.awaiting) && spec.members.contains(.awaitTimeout), "\(spec.op)")
            } else {
                #expect(![.write, .readAndWrite, .eachOp].contains(spec.access), "\(spec.op)")
                #expect(spec.keyPathUse != .write && !spec.batchable, "\(spec.op)")
            }
            // A single change: conditions, its key path written; a batch carries it.
            #expect(spec.batchable == (spec.changesState && spec.access != .eachOp), "\(spec.op)")
            #expect(spec.batchable == (spec.keyPathUse == .write), "\(spec.op)")
            #expect(spec.batchable == spec.members.contains(.ifModSeq), "\(spec.op)")
            if spec.depth == .elements { #expect(spec.members.contains(.values), "\(spec.op)") }
            for group in spec.required.all { #expect(!group.isEmpty && group.members.allSatisfy(spec.members.contains)) }
        }
    }

    /// A member of ``FieldSet/refusedWhereNotTaken`` that an op's row does
    /// not list is refused by name; each required member, left out, is missed.
    @Test func theDecoderDoesWhatEachRowSays() {
        for spec in OpSpec.table {
            let sample = samples[spec.op] ?? []
            for field in FieldSet.refusedWhereNotTaken where !spec.members.contains(field) {
                guard case .failure(_, let error) = decode(line(spec.op, sample + [(field.name, "1")])) else {
                    Issue.record("\(spec.op) took \(field.name)")
                    continue
                }
                #expect(error.message == "unknown field \"\(field.name)\" for op \"\(spec.op.rawValue)\"")
            }
            for group in spec.required.all {
                let without = sample.filter { member in !group.members.contains { $0.name == member.0 } }
                guard case .failure(_, let error) = decode(line(spec.op, without)) else {
                    Issue.record("\(spec.op) went without \(group.members.map(\.name))")
                    continue
                }
                #expect(error.code == .badRequest && error.message.hasPrefix("missing field"), "\(spec.op): \(error)")
            }
        }
    }

    /// What the access policy asks of each op follows its row.
    @Test func rightsFollowTheRow() {
        let set = Operation.set(object: "o", keyPath: ObservedPath.wholeDocument, value: .object([:]))
        #expect(Engine.rightsNeeded(by: set).map { $0.0 } == .write)
        #expect(Engine.rightsNeeded(by: .add(object: "o", keyPath: keyPath("a"), by: 1)).map { $0.0 } == .all)
        #expect(Engine.rightsNeeded(by: .get(object: "o", keyPath: nil)).map { $0.0 } == .read)
        #expect(Engine.rightsNeeded(by: .unobserve(scope: .object("o"), keyPaths: nil)) == nil)
        #expect(Engine.target(of: set)?.0 == "o" && Engine.target(of: set)?.1 == nil)
        #expect(Engine.target(of: .ping) == nil)
    }
}
