/// Receives the bytes a ``ClientController`` produces; the daemon's connection.
///
/// The engine knows nothing of sockets: it appends events and replies to the
/// controller's ``ClientController/output`` and tells its delegate once, when
/// the output stops being empty, so the daemon can schedule one write.
public protocol ClientOutputDelegate: AnyObject {
    func clientControllerHasOutput(_ controller: ClientController)
}

/// One client's observations (KVOController's `FBKVOController`): a table of
/// object → key path → ``ObservationInfo``, one per key path.
///
/// Observing a key path that is already observed does nothing and keeps the
/// first registration. Closing the controller, or releasing it, unobserves
/// everything, so nothing of a client outlives its connection.
public final class ClientController: CustomStringConvertible {
    /// A number that names this client in logs, unique in one engine.
    public let id: Int
    /// Strong: a controller released after its engine must still be able to
    /// unobserve (the shared controller holds controllers only weakly).
    private let shared: SharedController
    private var infosByObject: [String: [ObservedPath: ObservationInfo]] = [:]
    /// How many observations this client holds.
    public private(set) var observationCount = 0
    /// Events and replies not yet taken by the daemon, as wire bytes.
    public var output: [UInt8] = []
    /// Told when ``output`` becomes non-empty.
    public weak var outputDelegate: ClientOutputDelegate?
    /// Set by ``close()``: a closed client gets no more output.
    public private(set) var isClosed = false

    init(id: Int, shared: SharedController) {
        self.id = id
        self.shared = shared
    }

    deinit {
        unobserveAll()
    }

    // MARK: Observing

    /// Observes `keyPath` of `object`. Returns the new observation, or nil when
    /// this client already observes that key path (the first one is kept).
    @discardableResult
    public func observe(_ object: String, keyPath: ObservedPath, options: ObservationOptions,
                        context: JSONValue?) -> ObservationInfo? {
        guard !isClosed, infosByObject[object]?[keyPath] == nil else { return nil }
        let info = ObservationInfo(object: object, keyPath: keyPath, options: options, context: context,
                                   controller: self)
        infosByObject[object, default: [:]][keyPath] = info
        observationCount += 1
        shared.register(info)
        return info
    }

    /// Stops observing one key path; does nothing if it is not observed.
    public func unobserve(_ object: String, keyPath: ObservedPath) {
        guard let info = infosByObject[object]?.removeValue(forKey: keyPath) else { return }
        if infosByObject[object]?.isEmpty == true { infosByObject[object] = nil }
        observationCount -= 1
        shared.unregister(info)
    }

    /// Stops observing every key path of `object`; does nothing if none is.
    public func unobserve(_ object: String) {
        guard let infos = infosByObject.removeValue(forKey: object) else { return }
        observationCount -= infos.count
        for info in infos.values { shared.unregister(info) }
    }

    /// Stops observing everything.
    public func unobserveAll() {
        let all = infosByObject
        infosByObject = [:]
        observationCount = 0
        for infos in all.values {
            for info in infos.values { shared.unregister(info) }
        }
    }

    /// This client's observations, ordered by object then key path.
    public var observations: [ObservationInfo] {
        infosByObject.keys.sorted().flatMap { object in
            infosByObject[object]!.values.sorted { $0.keyPath < $1.keyPath }
        }
    }

    /// Whether this client observes `keyPath` of `object`.
    public func isObserving(_ object: String, keyPath: ObservedPath) -> Bool {
        infosByObject[object]?[keyPath] != nil
    }

    // MARK: Output

    /// Ends the client: unobserves everything and drops pending output.
    public func close() {
        isClosed = true
        unobserveAll()
        output = []
    }

    /// Takes the pending output, leaving it empty (and its capacity for reuse).
    public func takeOutput(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: output)
        output.removeAll(keepingCapacity: true)
    }

    func deliver(event prefix: [UInt8], contextFragment: [UInt8]) {
        guard !isClosed else { return }
        let wasEmpty = output.isEmpty
        output.append(contentsOf: prefix)
        output.append(contentsOf: contextFragment)
        output.append(contentsOf: EventEncoder.eventTerminator)
        if wasEmpty { outputDelegate?.clientControllerHasOutput(self) }
    }

    func append(reply bytes: [UInt8]) {
        guard !isClosed else { return }
        let wasEmpty = output.isEmpty
        output.append(contentsOf: bytes)
        if wasEmpty { outputDelegate?.clientControllerHasOutput(self) }
    }

    public var description: String {
        "<ClientController #\(id) observations:\(observationCount)>"
    }
}
