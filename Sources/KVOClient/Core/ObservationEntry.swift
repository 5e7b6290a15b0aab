import KVOValues
import KVOProtocol

/// One observation held by the daemon for this connection, shared by every
/// local ``Subscription`` of the same (object, key path).
///
/// The daemon keeps one observation per key path and connection (a second
/// `observe` changes nothing), so the entry registers the value options its
/// subscriptions need (``neededOptions``: the union of their `new`, `old` and
/// `prior`, so kvod sends no prior events and no values nobody reads), and
/// each subscription keeps only what its own options ask for. When a later
/// subscription needs more than the registration asked for, the entry is
/// registered again with the union at once (ConnectionCore+OptionsChange.swift);
/// when the last subscription that needed some option leaves, the
/// registration is narrowed in place (`observe` with `"update": true`).
/// `initial` is per subscription: the first one gets the daemon's initial
/// event, later ones a `get` (see docs/CLIENT.md). ``delivery`` is kvod's to
/// apply, so every subscription of an entry has the same.
///
/// @unchecked Sendable: its vars are read and written only under the
/// connection's lock.
final class ObservationEntry: @unchecked Sendable {
    /// The options that shape events; `initial` is per subscription.
    static let valueOptions: ObservationOptions = [.new, .old, .prior]

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
    /// The value options of the last `observe` made for this entry.
    private(set) var registeredOptions: ObservationOptions = []
    /// The value options of each `observe` of this entry in flight, oldest first:
    /// a reply makes live only the subscriptions its registration serves.
    var optionsInFlight: [ObservationOptions] = []

    init(key: ObservationKey, delivery: DeliveryOptions) {
        self.key = key
        self.delivery = delivery
    }

    /// The `observe` request that registers this entry, asking for an initial
    /// event when `initial` is true, or for the changes after `resume`.
    func observeRequest(initial: Bool, resume: ResumePoint? = nil) -> RequestEncoder {
        var line = key.request(.observe)
        registeredOptions = neededOptions
        optionsInFlight.append(registeredOptions)
        let options = initial ? registeredOptions.union(.initial) : registeredOptions
        line.strings(.options, options.wireNames)
        delivery.addFields(to: &line)
        if let resume {
            line.integer(.since, resume.seq)
            if let epoch = resume.epoch { line.string(.epoch, epoch) }
        }
        return line
    }

    /// The value options the subscriptions still in the entry ask for.
    var neededOptions: ObservationOptions {
        subscriptions.reduce(into: ObservationOptions()) { $0.formUnion($1.options) }.intersection(Self.valueOptions)
    }

    /// Whether the last registration sends what `subscription` asked for.
    func covers(_ subscription: Subscription) -> Bool {
        Self.options(registeredOptions, cover: subscription)
    }

    static func options(_ options: ObservationOptions, cover subscription: Subscription) -> Bool {
        options.isSuperset(of: subscription.options.intersection(valueOptions))
    }

    /// Whether the last registration asks for options no subscription needs
    /// any more (the last one that wanted `prior` or `old` left).
    var asksForMoreThanNeeded: Bool {
        isRegistered && registeredOptions != neededOptions && registeredOptions.isSuperset(of: neededOptions)
    }

    /// The `observe` with `"update": true` that narrows the registration to
    /// what the subscriptions still need, in place: kvod sends less from its
    /// reply on, and nothing a subscription needs goes missing meanwhile.
    func narrowingRequest() -> RequestEncoder {
        var line = key.request(.observe)
        registeredOptions = neededOptions
        line.strings(.options, registeredOptions.wireNames)
        line.bool(.update, true)
        return line
    }

    /// The `get` whose reply supplies a subscription's initial change (not
    /// for a prefix: its initial changes come only from the daemon's `observe`).
    func initialValueRequest() -> RequestEncoder {
        RequestEncoder(op: .get, object: key.object, keyPath: key.keyPath)
    }
}
