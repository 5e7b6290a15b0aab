import KVOValues

/// Encodes one node's event once per variant its observations read
/// (``EncodingVariant``: the new/old options and the form), one after the
/// other in one buffer reused from change to change; ``SharedController``
/// then copies each observation's variant to its client.
struct EventVariantEncoder {
    private var buffer = GrowableBytes()
    /// Bytes encoded since start: what tests hold to nothing when no observation takes them.
    private(set) var encodedBytes = 0

    /// The last encoding's bytes, without a reference to count: valid until the next ``encode``.
    var bytes: UnsafeRawBufferPointer { buffer.unsafeBytes }

    /// Encodes `variants` of `change`'s event for `group` (whose node is
    /// `node`, borrowed) and returns where each ends in ``bytes``. The
    /// change and its group are read in place: copying them cost more than
    /// encoding the event.
    @inline(__always)
    mutating func encode(_ variants: EncodingVariants, of change: ChangeRecord,
                         _ group: UnsafePointer<SharedController.MatchGroup>, at node: PathNode,
                         prior: Bool) -> VariantEnds {
        buffer.removeAll(keepingCapacity: true)
        defer { encodedBytes &+= buffer.count }
        var ends = VariantEnds()
        if variants.isEmpty {
            // Only held events: no bytes.
        } else if variants.isSubset(of: .newOnly),
                  ObservedChange.isPlainSetting(change, group.pointee.relation, options: .new, prior: prior) {
            // The usual group: its encodings (full, compact) read the change's value in place.
            if variants.contains(EncodingVariant.newFull) {
                // The group's head lives as long as the group, the node's as the node.
                let head = group.pointee.scopedHead?.withUnsafeBytes { $0 } ?? node.eventHeadBytes
                EventEncoder.setting(into: &buffer, head: head, new: change.new, seq: change.seq)
            }
            for variant in EncodingVariant.newFull..<EncodingVariant.newCompact { ends[variant] = buffer.count }
            if variants.contains(EncodingVariant.newCompact) {
                EventEncoder.setting(into: &buffer, head: Self.compactHead(of: change, at: node), new: change.new,
                                     seq: change.seq, compact: true)
            }
            for variant in EncodingVariant.newCompact..<8 { ends[variant] = buffer.count }
        } else {
            encodeEach(variants, of: change, group, prior: prior, into: &ends)
        }
        return ends
    }

    /// What a compact event says before its fields, after the `{"o":N` each
    /// observation writes: the changed object for a prefix's tree, else nothing.
    private static func compactHead(of change: ChangeRecord, at node: PathNode) -> [UInt8] {
        guard node.isPrefixScope else { return [] }
        var head: [UInt8] = []
        EventEncoder.appendObjectMember(change.object, to: &head)
        return head
    }

    /// The general case: each variant through ``ObservedChange`` and ``EventEncoder/write``.
    private mutating func encodeEach(_ variants: EncodingVariants, of change: ChangeRecord,
                                     _ group: UnsafePointer<SharedController.MatchGroup>, prior: Bool,
                                     into ends: inout VariantEnds) {
        let relation = group.pointee.relation
        let isExact = relation.isExact
        let head = group.pointee.scopedHead ?? group.pointee.node.eventHead
        let compactHead = variants.containsCompact ? Self.compactHead(of: change, at: group.pointee.node) : []
        for variant in 0..<8 {
            if variants.contains(variant) {
                let event = ObservedChange(change, relation, old: isExact ? change.old : group.pointee.old,
                                           new: isExact ? change.new : group.pointee.new,
                                           options: EncodingVariant.options(of: variant), prior: prior)
                let compact = EncodingVariant.isCompact(variant)
                EventEncoder.write(event, head: compact ? compactHead : head, compact: compact, to: &buffer)
            }
            ends[variant] = buffer.count
        }
    }
}

/// Where each encoding of one node's event ends in ``EventVariantEncoder/bytes``,
/// by variant; each starts where the one before ends. Eight fixed slots: no
/// allocation per change.
struct VariantEnds {
    private var slots: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)

    /// `variant` is 0 to 7 (a switch over the slots: reading them through a
    /// pointer copied the eight of them per event).
    subscript(variant: Int) -> Int {
        get {
            switch variant {
            case 0: slots.0
            case 1: slots.1
            case 2: slots.2
            case 3: slots.3
            case 4: slots.4
            case 5: slots.5
            case 6: slots.6
            default: slots.7
            }
        }
        set {
            switch variant {
            case 0: slots.0 = newValue
            case 1: slots.1 = newValue
            case 2: slots.2 = newValue
            case 3: slots.3 = newValue
            case 4: slots.4 = newValue
            case 5: slots.5 = newValue
            case 6: slots.6 = newValue
            default: slots.7 = newValue
            }
        }
    }

    /// The bytes of `variant`'s encoding in `all` (the encoder's ``EventVariantEncoder/bytes``).
    @inline(__always)
    func line(_ variant: Int, in all: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: all[(variant == 0 ? 0 : self[variant - 1])..<self[variant]])
    }
}
