import KVOValues

/// Receives what a ``ClientController`` produces; the daemon's connection.
///
/// The engine knows nothing of sockets: it appends events and replies to the
/// controller's ``ClientController/output`` and tells its delegate once, when
/// the output stops being empty, so the daemon can schedule one write. The
/// daemon tells the controller how much more output it can take
/// (``ClientController/outputAllowance``) and when its consumer caught up
/// (``ClientController/markDrained()``); the controller applies each
/// observation's ``ObservationPolicy`` in between.
public protocol ClientOutputDelegate: AnyObject {
    func clientControllerHasOutput(_ controller: ClientController)
    /// The client stopped keeping up: from now until ``ClientController/markDrained()``
    /// its events are held or end the connection, by policy. Replies still go out.
    func clientControllerBecameCongested(_ controller: ClientController)
    /// A `disconnect` observation had an event while the client was congested:
    /// close the connection. The controller produces no more output; it is
    /// called during dispatch, so close later (from the flush), not here.
    func clientController(_ controller: ClientController, mustDisconnectBecause reason: String)
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
    let shared: SharedController
    /// This client's observations, found by their node in the shared index
    /// (which stands for object and key path): one 8-byte slot each.
    @exclusivity(unchecked) private(set) var infos = ReferenceTable<ObservationInfo>()
    /// How many observations this client holds.
    public var observationCount: Int { Int(infos.count) }
    /// Events and replies not yet taken by the daemon, as wire bytes.
    @exclusivity(unchecked) public var output = GrowableBytes()
    /// Told when ``output`` becomes non-empty. Neither retained nor weak:
    /// the delegate must set it to nil before it goes away. (A weak reference
    /// gives the delegate a side table, which sends every retain and release
    /// of it, several per client per loop turn, down the slow path; a safe
    /// unowned one costs two atomic operations per call.)
    @exclusivity(unchecked) public unowned(unsafe) var outputDelegate: ClientOutputDelegate?
    /// Set by ``close()``: a closed client gets no more output.
    @exclusivity(unchecked) public private(set) var isClosed = false {
        didSet { noteFlowing() }
    }
    /// Who the client is, as the daemon read it from the socket; what the
    /// access policy decides on. Nil: unknown, which only `anyone` grants reach.
    public var credentials: PeerCredentials?

    /// How many bytes ``output`` may hold before the client counts as
    /// congested; nil: no limit. The daemon sets it after each write to what
    /// its connection may still queue.
    @exclusivity(unchecked) public var outputAllowance: Int?
    /// Whether output taken from ``output`` still waits for the client (in its
    /// socket, or for a commit); the daemon sets it after each write. A client
    /// that holds nothing still gets small events when all clients' output
    /// fills `--max-client-memory` (``ClientMemoryRoom``).
    @exclusivity(unchecked) public var holdsQueuedOutput = false
    /// Whether the last congestion came from `--max-client-memory` at a write
    /// (``ClientMemoryRoom``) rather than from this client's own output.
    public private(set) var isCongestedForClientMemory = false
    /// Whether the client waits in ``SharedController/clientMemoryWaiters``.
    var waitsForClientMemory = false
    /// Whether events are being held (or end the connection) instead of sent.
    @exclusivity(unchecked) public internal(set) var isCongested = false {
        didSet {
            if !isCongested {
                isCongestedForClientMemory = false
                stopWaitingForClientMemory()
            }
            countCongestion()
            noteFlowing()
        }
    }
    /// Neither closed, nor being disconnected, nor congested: an event goes
    /// straight into ``output``. One flag for the three, read once per event.
    @exclusivity(unchecked) private var isFlowing = true
    /// Whether the shared controller counts it among the coalescing clients.
    private var countedAsCongested = false
    /// Why the client must be disconnected, once a `disconnect` observation
    /// met congestion; no output is produced after that.
    @exclusivity(unchecked) public private(set) var disconnectReason: String? {
        didSet { noteFlowing() }
    }
    /// What congestion keeps back, in the order it goes out (see ``markDrained()``).
    @exclusivity(unchecked) var held = HeldEvents()
    /// The ``ObservationInfo/serial`` of the next observation.
    private var nextSerial: UInt64 = 0
    /// Observations with a lower serial were unobserved by ``unobserveAll()``
    /// and wait for their slice to leave the index: they get no event.
    private(set) var firstLiveSerial: UInt64 = 0
    /// Initial events to write a slice per turn while the client keeps up,
    /// oldest first (``continueInitialEvents(budget:)``); congestion moves
    /// them to ``held``, ahead of the events it holds.
    @exclusivity(unchecked) var pacedInitials: [InitialEvents] = [] {
        didSet { noteFlowing() }
    }
    /// A drain (``markDrained()``) stopped at its slice of initial events
    /// without writing any: the next slice drains again.
    var drainsInSlices = false
    /// This client's observations in the order they were made, while they
    /// are many (see ``ClientController/observations(after:limit:)``).
    @exclusivity(unchecked) var creationOrder: CreationOrder?
    /// The open intervals of throttled observations, by observation and
    /// object ("" but for a prefix observation); empty without throttles.
    @exclusivity(unchecked) var throttles: [ObjectIdentifier: [String: ThrottleWindow]] = [:]
    /// The highest seq this client acked (`ack`): it has handled every
    /// event up to it on its ack observations. 0 before the first ack.
    public internal(set) var ackedSeq: UInt64 = 0
    /// Output bytes the daemon took since the client connected
    /// (``noteOutputTaken()``): where ``output`` starts in the client's stream.
    public internal(set) var outputBytesTaken: UInt64 = 0
    /// The parts of writers' waits this client holds; nil while it holds none.
    @exclusivity(unchecked) var waitParts: WaitParts?
    /// This client's own change whose reply waits (`await`); nil: none.
    @exclusivity(unchecked) var pendingWait: ChangeWait?
    /// Over etcd: this client's last change waits to be committed and applied here.
    @exclusivity(unchecked) var awaitsReplication = false {
        didSet { if !awaitsReplication { replicatingBytes = 0 } }
    }
    /// Over etcd: the bytes of the requests whose proposal is in flight
    /// (``HoldsRequestBytes/heldBytes``); 0 once ``awaitsReplication`` ends.
    @exclusivity(unchecked) var replicatingBytes = 0 {
        didSet { countWaitingRequests() }
    }
    /// This client's `backup` whose reply waits for the daemon's snapshot; nil: none.
    var awaitedBackup: AwaitedBackup?
    /// Over etcd: the reply of a wait (`await`) that ended before its change's
    /// outcome came; it goes with the outcome (``Engine/outcomeOfAwait(_:_:to:from:)``).
    var replyAfterOutcome: [UInt8]?
    /// Over etcd: change requests read in a row, to be proposed as one
    /// transaction (``Engine/queuePipelinedChanges(of:)``).
    @exclusivity(unchecked) var pipelined = WaitingRequests<Request>() {
        didSet { countWaitingRequests() }
    }
    /// Over etcd: what came after them, answered once they are, in order.
    @exclusivity(unchecked) var parked = WaitingRequests<ParkedRequest>() {
        didSet { countWaitingRequests() }
    }
    /// Over etcd: ``pipelined`` is complete and waits for the loop turn's
    /// end, to be proposed with other clients' (``Engine/proposeQueuedPipelines()``).
    var pipelineQueued = false
    /// This client's part of ``SharedController/waitingRequestBytes``.
    private var countedRequestBytes = 0

    init(id: Int, shared: SharedController) {
        self.id = id
        self.shared = shared
    }

    deinit {
        // Not in slices: nothing may hold a controller that is going.
        var all = infos.elements
        infos = ReferenceTable()
        unregister(&all)
        if countedAsCongested { shared.coalescingClients -= 1 }
        shared.waitingRequestBytes -= countedRequestBytes
    }

    /// Moves the memory account by what this client's waiting requests hold now.
    private func countWaitingRequests() {
        let bytes = pipelined.bytes + parked.bytes + replicatingBytes
        shared.waitingRequestBytes += bytes - countedRequestBytes
        countedRequestBytes = bytes
    }

    // MARK: Observing

    /// Observes `keyPath` of `object`. Returns the new observation, or nil when
    /// this client already observes that key path (the first one is kept).
    @discardableResult
    public func observe(_ object: String, keyPath: ObservedPath, options: ObservationOptions,
                        context: JSONValue?, policy: ObservationPolicy = .default) -> ObservationInfo? {
        observe(.object(object), keyPath: keyPath, options: options, context: context, policy: policy)
    }

    /// Observes `keyPath` (``ObservedPath/wholeDocument``: the whole
    /// document) of one object or of every object under a prefix. Returns the
    /// new observation, or nil when this client already observes that key
    /// path in that scope (the first one is kept).
    @discardableResult
    public func observe(_ scope: ObservationScope, keyPath: ObservedPath, options: ObservationOptions,
                        context: JSONValue?, policy: ObservationPolicy = .default,
                        filter: ObservationFilter = .none, compact: Bool = false) -> ObservationInfo? {
        guard !isClosed else { return nil }
        // One walk finds or makes the node; the table says whether this client is there.
        return observe(at: shared.nodeCreating(keyPath, below: shared.rootCreating(scope)), options: options,
                       context: context, policy: policy, filter: filter, compact: compact)
    }

    /// Observes the key path of `node` (``SharedController/nodeCreating(_:below:)``'s),
    /// as ``observe(_:keyPath:options:context:policy:filter:compact:)`` does.
    func observe(at node: PathNode, options: ObservationOptions, context: JSONValue?, policy: ObservationPolicy,
                 filter: ObservationFilter, compact: Bool) -> ObservationInfo? {
        guard !isClosed else { return nil }
        // A node nobody observes yet (every new key path's) has none of this client's: no
        // probe of the table, each of whose steps reads another observation from memory.
        guard !node.hasObservations || infos.find(ObjectIdentifier(node)) == nil else { return nil }
        let info = ObservationInfo(node: node, options: options, context: context, policy: policy, filter: filter,
                                   compact: compact, controller: self)
        info.serial = nextSerial
        nextSerial += 1
        shared.register(info, at: node)
        infos.insert(info)
        noteMade(info)
        return info
    }

    /// Gives an observation of this client's other options (an `observe`
    /// with `update`): the events of changes from now on follow them; an
    /// event held for it goes out in their form too.
    func replaceOptions(of info: ObservationInfo, with options: ObservationOptions) {
        guard info.state == .observing, let node = info.node, info.options != options else { return }
        let old = info.options
        info.replaceOptions(with: options)
        node.optionsChanged(info, from: old)
    }

    /// Stops observing one key path of a scope; does nothing if it is not observed.
    public func unobserve(_ scope: ObservationScope, keyPath: ObservedPath) {
        guard let node = shared.node(scope, keyPath), let info = infos.remove(ObjectIdentifier(node)) else { return }
        held.drop(info)
        dropPacedInitialEvents(of: info)
        dropThrottle(of: info)
        noteEnded(CollectionOfOne(info))
        shared.unregister(info)
    }

    /// Stops observing every key path of a scope (the whole document's
    /// included); does nothing if none is.
    public func unobserve(_ scope: ObservationScope) {
        var matching = observations(in: scope)
        for info in matching {
            infos.remove(info.tableKey)
            held.drop(info)
            dropPacedInitialEvents(of: info)
            dropThrottle(of: info)
        }
        noteEnded(matching)
        unregister(&matching)
    }

    /// This client's observations in `scope`, found in whichever is smaller:
    /// the scope's tree in the shared index (each key path observed there, by
    /// any client, looked up in this client's table), or this client's table.
    /// The cost is the lesser of the two, so unobserving one object of a
    /// million observations does not read the million; and no observation
    /// pays for a second index by scope.
    private func observations(in scope: ObservationScope) -> [ObservationInfo] {
        guard observationCount > 0, let root = shared.node(scope, .wholeDocument) else { return [] }
        var found: [ObservationInfo] = []
        var budget = observationCount
        let walkedAll = root.visitSubtree { node in
            budget -= 1
            if let info = infos.find(ObjectIdentifier(node)) { found.append(info) }
            return budget > 0
        }
        if walkedAll { return found }
        found.removeAll()
        infos.forEach { info in
            if info.node!.root === root { found.append(info) }
        }
        return found
    }

    /// Stops observing everything. The observations get no event from now
    /// on, and this client may observe the same key paths again at once;
    /// more than a slice of them (``SharedController/sliceBudget``) leave
    /// the shared index in slices, one per loop turn: a connection's full
    /// share of observations held the loop for a long turn.
    public func unobserveAll() {
        discardHeld()
        dropAllThrottles()
        creationOrder = nil
        guard Int(infos.count) > SharedController.sliceBudget else {
            var all = infos.elements
            infos = ReferenceTable()
            return unregister(&all)
        }
        let count = Int(infos.count)
        firstLiveSerial = nextSerial
        shared.unregisterLater(infos.takeSlots(), count: count, of: self)
    }

    /// Unregisters infos just taken out of the table, emptying `taken`. Each
    /// keeps a copy of what it observed only if someone else still holds it:
    /// a closing client's million observations need none.
    private func unregister(_ taken: inout [ObservationInfo]) {
        // removeLast, not `while var info = popLast()`: the optional's
        // binding kept a second reference, so every info looked shared and
        // made a detached copy of its path as it went.
        while !taken.isEmpty {
            var info = taken.removeLast()
            let heldElsewhere = !isKnownUniquelyReferenced(&info)
            shared.unregister(info, keepDescription: heldElsewhere)
        }
    }

    /// This client's observations, ordered by scope (objects, then prefixes) then key path.
    public var observations: [ObservationInfo] {
        infos.elements
            .map { (scope: $0.scope, keyPath: $0.keyPath, info: $0) }
            .sorted { ($0.scope, $0.keyPath) < ($1.scope, $1.keyPath) }
            .map(\.info)
    }

    /// Whether this client observes `keyPath` in `scope`.
    public func isObserving(_ scope: ObservationScope, keyPath: ObservedPath) -> Bool {
        shared.node(scope, keyPath).flatMap(observation(at:)) != nil
    }

    /// This client's observation of `node`'s key path, if it has one.
    func observation(at node: PathNode) -> ObservationInfo? {
        infos.find(ObjectIdentifier(node))
    }

    // MARK: Output

    /// Ends the client: unobserves everything and drops pending output.
    public func close() {
        isClosed = true
        endWaits()
        unobserveAll()
        stopWaitingForClientMemory()
        output = GrowableBytes()
        countCongestion()
        // Nothing answers them now; a proposal in flight keeps its requests until its outcome.
        pipelined = WaitingRequests()
        parked = WaitingRequests()
    }

    /// Takes the pending output, leaving it empty (and its capacity for reuse).
    public func takeOutput(into buffer: inout [UInt8]) {
        noteOutputTaken()
        output.withUnsafeBytes { buffer.append(contentsOf: $0) }
        output.removeAll(keepingCapacity: true)
    }

    /// The delivery of one event line of `change` (ending `}\n`, its `seq`
    /// just before; a compact one's fields, after `{"o":N`), with the
    /// observation's context fragment spliced in before its closing brace; or, while congested, the observation's
    /// policy applied to it (``hold(_:for:isPrior:)``).
    @inline(__always)
    func deliver(line: UnsafeRawBufferPointer, contextFragment: UnsafeRawBufferPointer?, change: ChangeRecord,
                 for info: ObservationInfo, isPrior: Bool) {
        guard isFlowing else {
            return deliverWhileStopped(line: line, contextFragment: contextFragment, change: change, for: info,
                                       isPrior: isPrior)
        }
        append(line: line, contextFragment: contextFragment, change: change, for: info, isPrior: isPrior)
    }

    /// ``deliver(line:contextFragment:change:for:isPrior:)``'s event written,
    /// or held when it would pass the allowance.
    @inline(__always)
    private func append(line: UnsafeRawBufferPointer, contextFragment: UnsafeRawBufferPointer?, change: ChangeRecord,
                        for info: ObservationInfo, isPrior: Bool) {
        if SlowReaderPolicy.overflows(output.count + line.count + (contextFragment?.count ?? 0), allowance: outputAllowance) {
            becomeCongested()
            return hold(change, for: info, isPrior: isPrior)
        }
        let wasEmpty = output.isEmpty
        // A compact event's line is its fields: the observation's number goes first.
        if info.isCompact { appendCompactStart(of: info) }
        if let contextFragment {
            output.append(bytes: UnsafeRawBufferPointer(rebasing: line.dropLast(EventEncoder.eventTerminator.count)))
            output.append(bytes: contextFragment)
            // `}\n` byte by byte: the static array's bytes were retained to be read.
            output.append(UInt8(ascii: "}"))
            output.append(UInt8(ascii: "\n"))
        } else {
            output.append(bytes: line)
        }
        shared.eventsSent &+= 1
        info.noteSent(seq: change.seq)
        if wasEmpty { outputDelegate?.clientControllerHasOutput(self) }
    }

    /// An event for a client that is closed or being disconnected (nothing),
    /// congested (its observation's policy), or that has initial events
    /// still to write in slices: then it goes out, and if its observation is
    /// one of theirs it stands for its object's initial event, which is not
    /// written after it.
    @inline(never)
    private func deliverWhileStopped(line: UnsafeRawBufferPointer, contextFragment: UnsafeRawBufferPointer?,
                                     change: ChangeRecord, for info: ObservationInfo, isPrior: Bool) {
        guard !isClosed, disconnectReason == nil else { return }
        guard !isCongested else { return hold(change, for: info, isPrior: isPrior) }
        if !isPrior {
            for initial in pacedInitials { initial.noteSentAhead(info, object: change.object) }
        }
        append(line: line, contextFragment: contextFragment, change: change, for: info, isPrior: isPrior)
    }

    /// Whether an event for this client is written as bytes now (not held,
    /// dropped nor ignored): what decides whether a node's event is encoded
    /// while some clients are congested.
    var takesEventBytes: Bool { !isClosed && disconnectReason == nil && !isCongested }

    private func noteFlowing() {
        isFlowing = !isClosed && disconnectReason == nil && !isCongested && pacedInitials.isEmpty
    }

    /// `{"o":N`, out of line: inlined, it made ``deliver(line:contextFragment:change:for:isPrior:)``
    /// too large to inline into the shared controller's loop, which cost every event.
    @inline(never)
    private func appendCompactStart(of info: ObservationInfo) {
        EventEncoder.appendCompactStart(info.number, to: &output)
    }

    /// An event of `change` for `info` while congested: kept (without its
    /// bytes: it is encoded when it goes out) for a `coalesce` observation,
    /// the end of the client for a `disconnect` one. Prior events are not
    /// kept: the change that follows them is. A prefix observation's events
    /// are kept one per object, so that a congested client still hears of
    /// every object.
    @inline(never)
    func hold(_ change: ChangeRecord, for info: ObservationInfo, isPrior: Bool) {
        switch SlowReaderPolicy.fate(of: info.policy, isPrior: isPrior) {
        case .drop:
            shared.eventCounts.dropped += 1
        case .hold:
            let outcome = held.hold(change, for: info, scoped: info.node?.isPrefixScope ?? false)
            if outcome.replaced { shared.eventCounts.coalesced += 1 }
            shared.eventCounts.coalesced -= outcome.vanishedFolds
            shared.eventCounts.dropped += outcome.vanishedEvents
        case .disconnect:
            let cause = isCongestedForClientMemory ? "all clients' output at --max-client-memory" : "output over its limit"
            disconnect(because: "\(cause) with an event for \(LogText.quoted(info.object)) "
                + "\(LogText.quoted("\(info.keyPath)")), "
                + "policy disconnect")
        }
    }

    /// Replies are never held nor dropped: a client that does not read them
    /// is throttled by the daemon instead (it stops reading that client).
    func append(reply bytes: [UInt8]) {
        appendReply { $0.append(contentsOf: bytes) }
    }

    /// A success reply, written straight into the output. (Inlined: the
    /// reply and the id passed through one more call cost every request.)
    @inline(__always)
    func append(_ reply: ReplyEncoder, id: RequestID?) {
        appendReply { reply.write(id: id, to: &$0) }
    }

    @inline(__always)
    private func appendReply(_ write: (inout GrowableBytes) -> Void) {
        guard !isClosed, disconnectReason == nil else { return }
        let wasEmpty = output.isEmpty
        write(&output)
        if !isCongested, SlowReaderPolicy.overflows(output.count, allowance: outputAllowance) { becomeCongested() }
        if wasEmpty { outputDelegate?.clientControllerHasOutput(self) }
    }

    // MARK: Congestion

    /// How many items are held for this client: change events (one per
    /// observation at most, per object for a prefix observation) and cursors
    /// of initial events not written yet.
    public var heldEventCount: Int { held.count }
    /// About what the held events take (an item and its place in the
    /// indexes each): they count against `--max-client-memory`.
    public var heldEventBytes: Int { held.count * 96 }

    /// Marks the client congested from outside, e.g. because its output stayed
    /// over a soft limit for too long. Does nothing if it already is.
    public func markCongested() {
        guard !isCongested, !isClosed, disconnectReason == nil else { return }
        becomeCongested()
    }

    /// Forgets what is held (the client closed, was disconnected or unobserved
    /// everything), counting it as dropped.
    func discardHeld() {
        shared.eventCounts.dropped += held.count
        held = HeldEvents()
        drainsInSlices = false
        if !pacedInitials.isEmpty { pacedInitials = [] }
    }

    /// An event that would take all clients' output past `--max-client-memory`:
    /// the client goes to its observation's policy, and when it holds nothing
    /// it waits for room to drain (no write of its own would call the drain).
    @inline(never)
    func holdForClientMemory(_ change: ChangeRecord, for info: ObservationInfo, isPrior: Bool) {
        shared.clientMemory.congestions += 1
        isCongestedForClientMemory = true
        becomeCongested()
        hold(change, for: info, isPrior: isPrior)
        if output.isEmpty, !holdsQueuedOutput, disconnectReason == nil { waitForClientMemory() }
    }

    /// Joins the clients that drain once all clients' output has room again.
    func waitForClientMemory() {
        guard !waitsForClientMemory else { return }
        waitsForClientMemory = true
        shared.clientMemory.waiting += 1
        shared.clientMemoryWaiters.append(self)
    }

    /// Leaves the clients waiting for room (it drained, or closed); the list drops it when the wake passes.
    func stopWaitingForClientMemory() {
        guard waitsForClientMemory else { return }
        waitsForClientMemory = false
        shared.clientMemory.waiting -= 1
        if shared.clientMemory.waiting == 0 { shared.clientMemoryWaiters.removeAll() }
    }

    /// Whether a live event goes straight into ``output`` now (the shared
    /// controller counts its bytes against `--max-client-memory`).
    var takesLiveEventBytes: Bool { isFlowing }

    /// A live event when all clients' output has no room for its line
    /// (``ClientMemoryRoom``): written all the same if it is small and the
    /// client holds nothing, else held by its observation's policy.
    @inline(never)
    func deliverPastClientMemory(line: UnsafeRawBufferPointer, contextFragment: UnsafeRawBufferPointer?,
                                 change: ChangeRecord, for info: ObservationInfo, isPrior: Bool) {
        guard output.isEmpty, !holdsQueuedOutput, line.count <= ClientMemoryRoom.floorBytes else {
            return holdForClientMemory(change, for: info, isPrior: isPrior)
        }
        deliver(line: line, contextFragment: contextFragment, change: change, for: info, isPrior: isPrior)
    }

    func becomeCongested() {
        // Nothing is held while the client keeps up: the paced cursors go first.
        for initial in pacedInitials { held.append(initial) }
        if !pacedInitials.isEmpty { pacedInitials = [] }
        isCongested = true
        outputDelegate?.clientControllerBecameCongested(self)
    }

    func disconnect(because reason: String) {
        disconnectReason = reason
        output = GrowableBytes()
        discardHeld()
        countCongestion()
        outputDelegate?.clientController(self, mustDisconnectBecause: reason)
    }

    /// Keeps ``SharedController/coalescingClients`` in step: a client counts
    /// while it is congested and neither closed nor being disconnected.
    private func countCongestion() {
        let counts = isCongested && !isClosed && disconnectReason == nil
        guard counts != countedAsCongested else { return }
        countedAsCongested = counts
        shared.coalescingClients += counts ? 1 : -1
    }

    public var description: String {
        "<ClientController #\(id) observations:\(observationCount)>"
    }
}
