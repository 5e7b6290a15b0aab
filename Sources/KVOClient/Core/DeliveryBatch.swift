/// The changes the reader thread routed from one read, grouped by sink, so
/// that each sink gets them in one hand-off (one queue hop, one stream
/// wake-up) rather than one per change.
///
/// The reader flushes it at the end of every read and before anything that
/// must come after the changes read so far: a reply handed to a caller, a
/// registration going live, the connection ending.
struct DeliveryBatch {
    private var sinks: [any ChangeSink] = []
    private var changes: [[Delivered]] = []
    /// The position of a sink in ``sinks``, once there are many.
    private var positions: [ObjectIdentifier: Int] = [:]

    /// `bytes`: the length of the line the change came from.
    /// `change` is consumed: moved into the batch, not copied field by field.
    mutating func add(_ change: consuming Change, ticket: AckTicket?, bytes: Int, for sink: any ChangeSink) {
        let delivered = Delivered(moving: change, ticket: ticket, bytes: bytes + Delivered.overhead)
        // Most reads feed one or a few sinks: a scan beats hashing until there are many.
        if sinks.count <= 8 {
            if let position = sinks.firstIndex(where: { $0 === sink }) {
                changes[position].append(delivered)
                return
            }
        } else if let position = positions[ObjectIdentifier(sink)] {
            changes[position].append(delivered)
            return
        }
        positions[ObjectIdentifier(sink)] = sinks.count
        sinks.append(sink)
        var list = [delivered]
        list.reserveCapacity(128)  // a read of events holds hundreds: fewer copies while it grows
        changes.append(list)
    }

    /// Hands every sink its changes, in the order they were added, and empties the batch.
    mutating func flush() {
        guard !sinks.isEmpty else { return }
        let (sinks, changes) = (self.sinks, self.changes)
        self = DeliveryBatch()
        for (sink, batch) in zip(sinks, changes) { sink.deliver(batch) }
    }
}
