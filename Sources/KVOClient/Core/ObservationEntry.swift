import KVOEngine
import KVOProtocol

/// One observation held by the daemon for this connection, shared by every
/// local ``Subscription`` of the same (object, key path).
///
/// The daemon keeps one observation per key path and connection (the first
/// registration's options win), so the entry always registers with
/// ``daemonOptions`` (new, old and prior) and each subscription keeps only
/// what its own options ask for. `initial` is per subscription: the first one
/// gets the daemon's initial event, later ones a `get` (see docs/CLIENT.md).
/// ``delivery`` is kvod's to apply, so every subscription of an entry has the same.
///
/// @unchecked Sendable: its vars are read and written only under the
/// connection's lock.
final class ObservationEntry: @unchecked Sendable {
    /// What every daemon registration asks for, so that any subscriber can be served.
    static let daemonOptions: ObservationOptions = [.new, .old, .prior]

    let key: ObservationKey
    /// Which changes kvod sends this observation; the same for all its subscriptions.
    let delivery: DeliveryOptions
    var subscriptions: [Subscription] = []
    /// Whether the daemon acknowledged the registration on the current socket.
    var isRegistered = false
    /// The seq of the last change routed to this entry (and how many of its
    /// events), or of the reply that registered it: where a registration on a
    /// new socket resumes (`since`), and which replayed events it drops.
    var cursor = ResumeCursor()
    /// The epoch ``cursor`` counts in: from the reply that registered the
    /// entry, or from the resume point it was made with.
    var epoch: String?
    /// Initial changes that came before the registration's reply on a socket
    /// whose epoch was not known yet: delivered, with the reply's epoch, at that reply.
    var heldInitialChanges: [(subscription: Subscription, change: Change)] = []

    init(key: ObservationKey, delivery: DeliveryOptions) {
        self.key = key
        self.delivery = delivery
    }

    /// The `observe` request that registers this entry, asking for an initial
    /// event when `initial` is true, or for the changes after `resume`.
    func observeRequest(initial: Bool, resume: ResumePoint? = nil) -> RequestEncoder {
        var line = key.request(.observe)
        let options = initial ? Self.daemonOptions.union(.initial) : Self.daemonOptions
        line.strings(.options, options.wireNames)
        delivery.addFields(to: &line)
        if let resume {
            line.integer(.since, resume.seq)
            if let epoch = resume.epoch { line.string(.epoch, epoch) }
        }
        return line
    }

    func unobserveRequest() -> RequestEncoder {
        key.request(.unobserve)
    }

    /// The `get` whose reply supplies a subscription's initial change (not
    /// for a prefix: its initial changes come only from the daemon's `observe`).
    func initialValueRequest() -> RequestEncoder {
        RequestEncoder(op: .get, object: key.object, keyPath: key.keyPath)
    }
}
