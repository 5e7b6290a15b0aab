@_spi(Fuzzing) import KVOEngine
import KVOValues

/// One fuzz input run through everything a client's bytes reach: the line
/// framer, the request decoder and the engine, with a second client watching
/// the same objects, and checks that trap when an invariant breaks.
///
/// Input layout: byte 0 sets up the run (``Setup``); the rest is the byte
/// stream one client sends, fed in chunks of the size byte 0 chooses.
///
/// Invariants checked: every line kvod writes is a JSON object, either an
/// event or a reply; events reach each client in seq order; every frame gets
/// exactly one reply (unless the client was disconnected by policy); the
/// registry counts exactly the clients' observations; closing both clients
/// leaves nothing registered; a prefix observation's event is of an object
/// under its prefix; the decoder's one pass reads every line as its full
/// reader does. The watcher observes key paths, whole documents and
/// prefixes; `Fuzz/kvod.dict` gives libFuzzer every field and op name.
public enum FuzzHarness {
    /// What byte 0 selects.
    struct Setup {
        let byte: UInt8
        /// 0: one chunk; else chunks of 1, 2, 4 … 64 bytes.
        var chunkSize: Int? { byte & 7 == 0 ? nil : 1 << Int(byte & 7 - 1) }
        var watcherStartsCongested: Bool { byte & 8 != 0 }
        var watcherPolicy: ObservationPolicy { byte & 16 != 0 ? .disconnect : .coalesce }
        /// The sending client may queue little before it is congested itself.
        var senderHasSmallAllowance: Bool { byte & 32 != 0 }
        /// An access policy applies, and the sender is not a superuser.
        var withAccessPolicy: Bool { byte & 64 != 0 }
        var maxLineBytes: Int { byte & 128 != 0 ? 64 : 4096 }
    }

    static let policy = AccessPolicy(grants: [
        .init(.user(1000), objectPrefix: "a", rights: .all),
        .init(.anyone, objectPrefix: "b", rights: .read),
        // Write-only: the failures the sender may not be told the reason of.
        .init(.user(1000), objectPrefix: "c", rights: .write),
    ])

    /// Runs one input. Traps (the fuzzer's "crash") when an invariant breaks.
    public static func run(_ input: UnsafeRawBufferPointer) {
        guard let first = input.first else { return }
        let setup = Setup(byte: first)
        let stream = UnsafeRawBufferPointer(rebasing: input.dropFirst())
        let engine = Engine(configuration: EngineConfiguration(
            maxObservationsPerClient: 64, accessPolicy: setup.withAccessPolicy ? policy : nil))
        let watcher = engine.makeClient()
        let sender = engine.makeClient()
        sender.credentials = PeerCredentials(pid: 2, uid: 1000, gid: 1000)
        if setup.senderHasSmallAllowance { sender.outputAllowance = 256 }
        var watcherSeq = SeqOrder()
        var senderSeq = SeqOrder()
        watch(with: watcher, setup, engine, &watcherSeq)
        var framer = LineFramer(maxLineBytes: setup.maxLineBytes)
        // One decoder for the whole input, as the daemon keeps one: its key path cache is exercised too.
        var decoder = RequestDecoder()
        var frames = 0
        var replies = 0
        var offset = 0
        repeat {
            let end = setup.chunkSize.map { min(stream.count, offset + $0) } ?? stream.count
            framer.feed(UnsafeRawBufferPointer(rebasing: stream[offset..<end])) { frame in
                frames += 1
                switch frame {
                case .line(let line):
                    senderSeq.expectReply(to: line)
                    requireOnePassAgreesWithTheFullReader(line)
                    engine.handle(decoder.decode(line), from: sender)
                case .tooLarge:
                    senderSeq.expectReply(to: nil)
                    engine.handleLineTooLarge(maxLineBytes: setup.maxLineBytes, from: sender)
                }
            }
            replies += checkedReplies(from: sender, &senderSeq)
            if sender.isCongested { sender.markDrained() }
            offset = end
        } while offset < stream.count
        replies += checkedReplies(from: sender, &senderSeq)
        require(sender.disconnectReason != nil || replies == frames, "\(frames) frames got \(replies) replies")
        // The sender's ephemeral values go with it, in slices; its deletions are events like any other.
        engine.closeClient(sender)
        while engine.releaseDueValues(budget: 7) {}
        require(engine.valuesOwned(by: sender) == 0 && !engine.hasPendingReleases, "a closed client still owns values")
        require(engine.shared.observationCount == watcher.observationCount + sender.observationCount,
                "registry counts \(engine.shared.observationCount) observations")
        watcher.markDrained()
        _ = checkedReplies(from: watcher, &watcherSeq)
        engine.closeClient(watcher)
        require(engine.shared.observationCount == 0 && engine.clientCount == 0, "closed clients left observations")
    }

    /// The decoder's one pass (what every line takes) and its full reader
    /// (what explains a bad line) must decode every line alike.
    private static func requireOnePassAgreesWithTheFullReader(_ line: UnsafeRawBufferPointer) {
        let onePass = String(describing: RequestDecoder.decode(line))
        let fullReader = String(describing: RequestDecoder.decodeWithFullReader(line))
        require(onePass == fullReader, "one pass \(onePass), full reader \(fullReader)")
    }

    private static func watch(with watcher: ClientController, _ setup: Setup, _ engine: Engine,
                              _ lastSeq: inout SeqOrder) {
        let policy = setup.watcherPolicy.rawValue
        for line in [
            #"{"op":"observe","object":"a","keyPaths":["x","x.y","z"],"options":["new","old","prior","initial"],"policy":"\#(policy)"}"#,
            #"{"op":"observe","object":"b","keyPath":"x","options":["new"],"context":{"c":[1]},"policy":"\#(policy)"}"#,
            #"{"op":"observe","prefix":"a","keyPaths":["x","z"],"options":["new","old","prior"],"policy":"\#(policy)"}"#,
            #"{"op":"observe","prefix":"","options":["new","initial"],"policy":"\#(policy)"}"#,
            #"{"op":"observe","object":"b","options":["old","prior"],"policy":"\#(policy)"}"#,
        ] {
            Array(line.utf8).withUnsafeBytes { engine.handle(line: $0, from: watcher) }
        }
        _ = checkedReplies(from: watcher, &lastSeq)
        if setup.watcherStartsCongested { watcher.markCongested() }
    }

    /// Takes the client's output, checks every line, and counts the replies.
    /// `lastSeq` holds the seq of the last event of each observation the client got before.
    private static func checkedReplies(from client: ClientController, _ lastSeq: inout SeqOrder) -> Int {
        var bytes: [UInt8] = []
        client.takeOutput(into: &bytes)
        guard !bytes.isEmpty else { return 0 }
        require(bytes.last == UInt8(ascii: "\n"), "output does not end with a newline")
        var replies = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast() {
            guard case .object(let members)? = try? JSONReader.parse(line, maxDepth: DocumentDepth.readerLimit) else {
                fatalError("kvod wrote a line that is not a JSON object: \(String(decoding: line, as: UTF8.self))")
            }
            if members["event"] != nil {
                guard case .number(let number)? = members["seq"], let seq = number.intValue,
                      members["object"] != nil else {
                    fatalError("event without seq or object: \(String(decoding: line, as: UTF8.self))")
                }
                if case .string(let prefix)? = members["prefix"], case .string(let object)? = members["object"] {
                    require(CanonicalName.hasPrefix(object, prefix), "event of \(object) for prefix \(prefix)")
                }
                lastSeq.check(seq, of: members)
            } else {
                require(members["ok"] == .bool(true) || members["error"] != nil, "neither event nor reply")
                lastSeq.replied()
                replies += 1
            }
        }
        return replies
    }

    private static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("invariant broken: \(message())") }
    }
}

/// Events of one observation come in seq order. Across observations a client
/// may see an older seq later: an observation made with `since` replays the
/// changes it missed, older than what the client's other observations sent;
/// and after an `unobserve`, a new observation of the same key path may
/// replay changes its predecessor had sent already.
private struct SeqOrder {
    private var last: [String: Int] = [:]
    /// Whether each request awaiting its reply was an unobserve, in request order.
    private var awaited: [Bool] = []
    private var answered = 0

    mutating func check(_ seq: Int, of event: JSONObject) {
        var key = ""
        for name in ["prefix", "object", "keyPath"] {
            if case .string(let part)? = event[name] { key += part }
            key += "\u{0}"
        }
        if let before = last[key], seq < before {
            fatalError("invariant broken: event seq \(seq) after seq \(before) for \(key.debugDescription)")
        }
        last[key] = seq
    }

    /// A request line (nil: one over the size limit) whose reply is to come.
    mutating func expectReply(to line: UnsafeRawBufferPointer?) {
        guard let line, case .object(let members)? = try? JSONReader.parse(line, maxDepth: DocumentDepth.readerLimit),
              case .string(let op)? = members["op"] else {
            awaited.append(false)
            return
        }
        awaited.append(op == "unobserve" || op == "unobserveAll")
    }

    /// A reply came: after an unobserve's, the observations' order starts anew.
    mutating func replied() {
        guard answered < awaited.count else { return }
        if awaited[answered] { last = [:] }
        answered += 1
    }
}
