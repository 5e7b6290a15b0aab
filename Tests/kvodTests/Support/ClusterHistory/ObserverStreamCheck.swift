/// Every observer's stream of a round (``StreamObserver``), checked as etcd's
/// robustness tests check watches: in seq order; complete (every revision
/// from the round's first to its marker is there, no gap: only kvod writes
/// under the prefix, and every revision it makes changes `a` or `b` of an
/// object, so seqs skip nothing here); each acknowledged write at its
/// answer's seq, nothing refused or failed, no value twice; a batch's writes
/// at one seq, side by side; and the same lines on every kvod.
struct ObserverStreamCheck {
    var violations: [String] = []
    /// Events in each stream.
    var events = 0
    /// Writes of unknown outcome that the streams show applied, and not.
    var unknownApplied = 0
    var unknownNotApplied = 0

    /// `streams`: each observer's events with seqs in (`after`, `through`], the marker's last.
    init(_ streams: [[StreamObserver.Event]], records: [RecordedOperation], after: Int, through: Int, marker: String) {
        guard let first = streams.first else { return }
        events = first.count
        for (kvod, stream) in streams.enumerated().dropFirst() where stream.map(\.line) != first.map(\.line) {
            let common = min(stream.count, first.count)
            let at = (0..<common).first { stream[$0].line != first[$0].line } ?? common
            violations.append("kvod \(kvod)'s observer heard \(stream.count) events, kvod 0's \(first.count); the first "
                + "difference, event \(at): \(Self.around(at, stream)) vs \(Self.around(at, first))")
        }
        for (kvod, stream) in streams.enumerated() { check(stream, kvod, records, after, through, marker) }
    }

    private static func around(_ index: Int, _ stream: [StreamObserver.Event]) -> String {
        "[" + stream[max(0, index - 1)..<min(stream.count, index + 2)].map(\.line).joined(separator: ", ") + "]"
    }

    private mutating func check(_ stream: [StreamObserver.Event], _ kvod: Int, _ records: [RecordedOperation],
                                _ after: Int, _ through: Int, _ marker: String) {
        let name = "kvod \(kvod)'s observer"
        if let back = stream.indices.dropFirst().first(where: { stream[$0].seq < stream[$0 - 1].seq }) {
            violations.append("\(name): seq \(stream[back].seq) after \(stream[back - 1].seq): \(stream[back].line)")
        }
        let seqs = Set(stream.map(\.seq))
        let missing = (after + 1...max(after + 1, through)).filter { !seqs.contains($0) }
        if !missing.isEmpty || stream.last?.value != marker {
            violations.append("\(name): no event of \(missing.count) revisions in (\(after), \(through)]: "
                + "\(missing.prefix(10))\(missing.count > 10 ? "…" : ""); last event \(stream.last?.line ?? "none")")
        }
        var position: [String: Int] = [:]
        for (index, event) in stream.enumerated() {
            let key = "\(event.object).\(event.path)=\(event.value ?? "null")"
            if let earlier = position.updateValue(index, forKey: key) {
                violations.append("\(name): \(key) twice, at seq \(stream[earlier].seq) and \(event.seq)")
            }
        }
        var written = Set<String>([marker])
        for record in records {
            guard case .write(let object, let writes, let isBatch) = record.request else { continue }
            let found = writes.map { position["\(object).\($0.path)=\($0.value)"] }
            for (write, index) in zip(writes, found) {
                written.insert(write.value)
                switch (record.outcome, index) {
                case (.applied(let seq), let index?) where stream[index].seq == seq: break
                case (.applied(let seq), let index):
                    violations.append("\(name): \(object).\(write.path)=\(write.value), acknowledged at seq \(seq), "
                        + (index.map { "heard at seq \(stream[$0].seq)" } ?? "never heard"))
                case (.conditionFailed, _?), (.notApplied, _?):
                    violations.append("\(name): \(object).\(write.path)=\(write.value) was refused (\(record.outcome)) "
                        + "and heard at seq \(stream[index!].seq)")
                default: break
                }
            }
            let heard = found.compactMap { $0 }
            if isBatch, !heard.isEmpty {
                if heard.count != writes.count || Set(heard.map { stream[$0].seq }).count != 1
                    || heard.max()! - heard.min()! != heard.count - 1 {
                    violations.append("\(name): a batch's writes heard apart: \(heard.map { stream[$0].line })")
                }
            }
            if kvod == 0, case .unknown = record.outcome {
                if heard.isEmpty { unknownNotApplied += 1 } else { unknownApplied += 1 }
            }
        }
        for event in stream where !written.contains(event.value ?? "") {
            violations.append("\(name): heard a value no client of the round wrote: \(event.line)")
        }
    }
}
