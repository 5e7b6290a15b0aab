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
    /// This client's observations, found by their node in the shared index
    /// (which stands for object and key path): one 8-byte slot each.
    private var infos = ReferenceTable<ObservationInfo>()
    /// How many observations this client holds.
    public var observationCount: Int { Int(infos.count) }
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
        guard !isClosed else { return nil }
        // One walk finds or makes the node; the table says whether this client is there.
        let node = shared.nodeCreating(object, keyPath)
        guard infos.find(ObjectIdentifier(node)) == nil else { return nil }
        let info = ObservationInfo(node: node, options: options, context: context, controller: self)
        shared.register(info, at: node)
        infos.insert(info)
        return info
    }

    /// Stops observing one key path; does nothing if it is not observed.
    public func unobserve(_ object: String, keyPath: ObservedPath) {
        guard let node = shared.node(object, keyPath), let info = infos.remove(ObjectIdentifier(node)) else { return }
        shared.unregister(info)
    }

    /// Stops observing every key path of `object`; does nothing if none is.
    public func unobserve(_ object: String) {
        // A scan of this client's observations: rarer than a change, and it
        // spares every observation a second index by object.
        var matching: [ObservationInfo] = []
        infos.forEach { info in
            if info.node!.object == object { matching.append(info) }
        }
        for info in matching { infos.remove(info.tableKey) }
        unregister(&matching)
    }

    /// Stops observing everything.
    public func unobserveAll() {
        var all = infos.elements
        infos = ReferenceTable()
        unregister(&all)
    }

    /// Unregisters infos just taken out of the table, emptying `taken`. Each
    /// keeps a copy of what it observed only if someone else still holds it:
    /// a closing client's million observations need none.
    private func unregister(_ taken: inout [ObservationInfo]) {
        while var info = taken.popLast() {
            shared.unregister(info, keepDescription: !isKnownUniquelyReferenced(&info))
        }
    }

    /// This client's observations, ordered by object then key path.
    public var observations: [ObservationInfo] {
        infos.elements
            .map { (object: $0.object, keyPath: $0.keyPath, info: $0) }
            .sorted { ($0.object, $0.keyPath) < ($1.object, $1.keyPath) }
            .map(\.info)
    }

    /// Whether this client observes `keyPath` of `object`.
    public func isObserving(_ object: String, keyPath: ObservedPath) -> Bool {
        guard let node = shared.node(object, keyPath) else { return false }
        return infos.find(ObjectIdentifier(node)) != nil
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

    /// Appends an event line (ending `}\n`), with the observation's context
    /// fragment spliced in before its closing brace.
    func deliver(event line: [UInt8], contextFragment: [UInt8]) {
        line.withUnsafeBytes { line in
            contextFragment.withUnsafeBytes { deliver(line: line, contextFragment: $0.isEmpty ? nil : $0) }
        }
    }

    @inline(__always)
    func deliver(line: UnsafeRawBufferPointer, contextFragment: UnsafeRawBufferPointer?) {
        guard !isClosed else { return }
        let wasEmpty = output.isEmpty
        if let contextFragment {
            output.append(contentsOf: line.dropLast(EventEncoder.eventTerminator.count))
            output.append(contentsOf: contextFragment)
            output.append(contentsOf: EventEncoder.eventTerminator)
        } else {
            output.append(contentsOf: line)
        }
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
