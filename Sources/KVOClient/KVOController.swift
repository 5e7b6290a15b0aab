import Dispatch
import Foundation
import Synchronization

/// KVOController's interface to kvod: one controller per observer, which it
/// holds weakly, with block and action callbacks, `unobserve` in symmetric
/// pairs, and everything unobserved when the controller goes away.
///
/// ```swift
/// final class ViewModel {
///     lazy var kvo = KVOController(observer: self, connection: connection)
///     func start() {
///         kvo.observe("person/1", keyPath: "name", options: [.new, .initial]) { viewModel, object, change in
///             viewModel.name = try? change.new(as: String.self)
///         }
///         kvo.observe("person/1", keyPath: "age", options: [.new], action: ViewModel.ageChanged)
///     }
///     func ageChanged(_ change: Change) { … }
/// }
/// ```
///
/// Callbacks run on `queue` (by default a serial queue of the controller's
/// own), one at a time, in the order kvod sent the changes. A callback never
/// runs for an observer that is gone (the controller then unobserves
/// everything), nor once ``unobserve(_:keyPath:)`` has returned on `queue`.
/// Calling any method from inside a callback is safe.
///
/// Observing an (object, key path) the controller already observes does
/// nothing: the first registration (options, context, block) stays. Several
/// controllers on one connection share one observation on the daemon.
public final class KVOController<Observer: AnyObject>: @unchecked Sendable, CustomDebugStringConvertible {
    // @unchecked: `registrations` is guarded by its lock; `weakObserver` is
    // set once, and the observer and the blocks are used only on `queue`.

    /// A block gets the observer, the object's name and the change. It is
    /// `@Sendable`: it runs on ``queue``, so Swift checks that it touches
    /// nothing of the place it was written in (a main-actor model, say) unsafely.
    public typealias Block = @Sendable (_ observer: Observer, _ object: String, _ change: Change) -> Void
    /// What the sinks call: a ``Block``, a deprecated block that is not `@Sendable`, or an action.
    typealias AnyBlock = (_ observer: Observer, _ object: String, _ change: Change) -> Void
    /// Called on `queue` when an observation ends without being unobserved
    /// (see ``init(observer:connection:queue:onError:)``).
    public typealias ErrorHandler = (_ observer: Observer, _ error: KVOClientError) -> Void

    /// The connection the observations are made on; the controller keeps it open.
    public let connection: KVOConnection
    /// Where callbacks run.
    public let queue: DispatchQueue
    private weak var weakObserver: Observer?
    private let registrations = Locked<[ObservationKey: Registration]>([:])
    private let errorHandler: ErrorHandler?
    /// A lost connection ends every observation at once; it is reported once.
    private let reportedConnectionError = Atomic<Bool>(false)

    private struct Registration: Sendable {
        var subscription: Subscription
        var sink: ControllerSink<Observer>
    }

    /// Makes a controller for `observer`'s observations on `connection`; it observes nothing yet.
    ///
    /// - Parameters:
    ///   - observer: receives the callbacks; held weakly.
    ///   - connection: where the observations are made; kept open while the controller exists.
    ///   - queue: where callbacks run (`.main` for an observer confined to the main thread).
    ///   - onError: called on `queue` when an observation ends without `unobserve`:
    ///     kvod refused it (`bad_request`, `forbidden`, `limit_exceeded`: once per
    ///     observation), could not replay it after a reconnect (`compacted`: once per
    ///     observation), fell behind though it asked for every change
    ///     (``DeliveryOptions/everyChange``: `limit_exceeded`, once per observation),
    ///     or the connection was lost or closed (once for the controller).
    ///     The observation is forgotten by then, so it may be observed again. Without
    ///     `onError`, such errors are written to standard error.
    public init(observer: Observer, connection: KVOConnection, queue: DispatchQueue? = nil,
                onError: ErrorHandler? = nil) {
        weakObserver = observer
        self.connection = connection
        self.queue = queue ?? DispatchQueue(label: "KVOController")
        errorHandler = onError
    }

    deinit { unobserveAll() }

    /// The observer, while it exists.
    public var observer: Observer? { weakObserver }

    /// The sinks of what the controller observes now.
    var sinks: [ControllerSink<Observer>] { registrations.withLock { $0.values.map(\.sink) } }

    // MARK: Observing

    /// Observes `keyPath` of `object`; `block` gets each change.
    /// Does nothing when this controller already observes that key path.
    ///
    /// `delivery` says which changes kvod sends (``DeliveryOptions``: only real
    /// changes, only some kinds, at most one per interval); by default all.
    ///
    /// `block` is `@Sendable` because it runs on ``queue``, not where it was
    /// written: Swift then refuses a block that touches main-actor state
    /// directly (write `MainActor.assumeIsolated { … }` in it, with `queue: .main`).
    public func observe(_ object: String, keyPath: String, options: ObservationOptions = [],
                        delivery: DeliveryOptions = .all, context: JSONValue? = nil, block: @escaping Block) {
        observe(ObservationKey(object: object, keyPath: keyPath), options: options, delivery: delivery,
                context: context, block: block)
    }

    /// Observes the whole document of `object`: each change has no key path,
    /// and its `new`/`old` are the whole document (`null` when the object
    /// does not exist). Does nothing when this controller already observes it.
    public func observe(_ object: String, options: ObservationOptions = [], delivery: DeliveryOptions = .all,
                        context: JSONValue? = nil, block: @escaping Block) {
        observe(ObservationKey(object: object, keyPath: nil), options: options, delivery: delivery, context: context,
                block: block)
    }

    /// Observes `keyPath` (nil: the whole document) of every object whose
    /// name starts with `prefix`, also of objects created later; `block` gets
    /// the changed object's name. With `.initial`, one change per object
    /// under the prefix first (see ``KVOConnection/changes(prefix:keyPath:options:delivery:context:since:)``).
    public func observe(prefix: String, keyPath: String? = nil, options: ObservationOptions = [],
                        delivery: DeliveryOptions = .all, context: JSONValue? = nil, block: @escaping Block) {
        observe(ObservationKey(object: prefix, keyPath: keyPath, isPrefix: true), options: options, delivery: delivery,
                context: context, block: block)
    }

    /// Observes each of `keyPaths` of `object` with the same block.
    public func observe(_ object: String, keyPaths: [String], options: ObservationOptions = [],
                        delivery: DeliveryOptions = .all, context: JSONValue? = nil, block: @escaping Block) {
        for keyPath in keyPaths {
            observe(object, keyPath: keyPath, options: options, delivery: delivery, context: context, block: block)
        }
    }

    /// Observes `keyPath` of `object` and calls `action` on the observer, an
    /// unbound method reference such as `ViewModel.nameChanged` (Swift's selector).
    public func observe(_ object: String, keyPath: String, options: ObservationOptions = [],
                        delivery: DeliveryOptions = .all, context: JSONValue? = nil,
                        action: @escaping (Observer) -> (Change) -> Void) {
        observe(ObservationKey(object: object, keyPath: keyPath), options: options, delivery: delivery,
                context: context, block: Self.block(calling: action))
    }

    /// Observes each of `keyPaths` of `object` with the same action.
    public func observe(_ object: String, keyPaths: [String], options: ObservationOptions = [],
                        delivery: DeliveryOptions = .all, context: JSONValue? = nil,
                        action: @escaping (Observer) -> (Change) -> Void) {
        for keyPath in keyPaths {
            observe(object, keyPath: keyPath, options: options, delivery: delivery, context: context, action: action)
        }
    }

    /// Observes the whole document of `object` and calls `action` on the observer.
    public func observe(_ object: String, options: ObservationOptions = [], delivery: DeliveryOptions = .all,
                        context: JSONValue? = nil, action: @escaping (Observer) -> (Change) -> Void) {
        observe(ObservationKey(object: object, keyPath: nil), options: options, delivery: delivery, context: context,
                block: Self.block(calling: action))
    }

    /// Observes `keyPath` (nil: the whole document) under `prefix` and calls `action` on the observer.
    public func observe(prefix: String, keyPath: String? = nil, options: ObservationOptions = [],
                        delivery: DeliveryOptions = .all, context: JSONValue? = nil,
                        action: @escaping (Observer) -> (Change) -> Void) {
        observe(ObservationKey(object: prefix, keyPath: keyPath, isPrefix: true), options: options, delivery: delivery,
                context: context, block: Self.block(calling: action))
    }

    private static func block(calling action: @escaping (Observer) -> (Change) -> Void) -> AnyBlock {
        { observer, _, change in action(observer)(change) }
    }

    private func observe(_ key: ObservationKey, options: ObservationOptions, delivery: DeliveryOptions,
                         context: JSONValue?, block: @escaping AnyBlock) {
        registrations.withLock { registrations in
            guard registrations[key] == nil else { return }
            let sink = ControllerSink(controller: self, key: key, everyChange: delivery.everyChange, block: block)
            let subscription = connection.core.subscribe(key, options: options, delivery: delivery, context: context,
                                                         sink: sink)
            registrations[key] = Registration(subscription: subscription, sink: sink)
        }
    }

    // MARK: Observing with a block that is not @Sendable (deprecated)

    /// Observes `keyPath` of `object` with a block that is not `@Sendable`.
    @available(*, deprecated, message: "the block runs on the controller's queue: make it @Sendable (a closure literal is), so Swift checks what it touches")
    @_disfavoredOverload
    public func observe(_ object: String, keyPath: String, options: ObservationOptions = [],
                        delivery: DeliveryOptions = .all, context: JSONValue? = nil,
                        block: @escaping (_ observer: Observer, _ object: String, _ change: Change) -> Void) {
        observe(ObservationKey(object: object, keyPath: keyPath), options: options, delivery: delivery,
                context: context, block: block)
    }

    /// Observes the whole document of `object` with a block that is not `@Sendable`.
    @available(*, deprecated, message: "the block runs on the controller's queue: make it @Sendable (a closure literal is), so Swift checks what it touches")
    @_disfavoredOverload
    public func observe(_ object: String, options: ObservationOptions = [], delivery: DeliveryOptions = .all,
                        context: JSONValue? = nil,
                        block: @escaping (_ observer: Observer, _ object: String, _ change: Change) -> Void) {
        observe(ObservationKey(object: object, keyPath: nil), options: options, delivery: delivery, context: context,
                block: block)
    }

    /// Observes under `prefix` with a block that is not `@Sendable`.
    @available(*, deprecated, message: "the block runs on the controller's queue: make it @Sendable (a closure literal is), so Swift checks what it touches")
    @_disfavoredOverload
    public func observe(prefix: String, keyPath: String? = nil, options: ObservationOptions = [],
                        delivery: DeliveryOptions = .all, context: JSONValue? = nil,
                        block: @escaping (_ observer: Observer, _ object: String, _ change: Change) -> Void) {
        observe(ObservationKey(object: prefix, keyPath: keyPath, isPrefix: true), options: options, delivery: delivery,
                context: context, block: block)
    }

    /// Observes each of `keyPaths` of `object` with a block that is not `@Sendable`.
    @available(*, deprecated, message: "the block runs on the controller's queue: make it @Sendable (a closure literal is), so Swift checks what it touches")
    @_disfavoredOverload
    public func observe(_ object: String, keyPaths: [String], options: ObservationOptions = [],
                        delivery: DeliveryOptions = .all, context: JSONValue? = nil,
                        block: @escaping (_ observer: Observer, _ object: String, _ change: Change) -> Void) {
        for keyPath in keyPaths {
            observe(ObservationKey(object: object, keyPath: keyPath), options: options, delivery: delivery,
                    context: context, block: block)
        }
    }

    // MARK: Unobserving

    /// Stops observing `keyPath` of `object` (nil: its whole document, the
    /// key paths staying observed). Does nothing when it is not observed.
    public func unobserve(_ object: String, keyPath: String?) {
        end(registrations.withLock { $0.removeValue(forKey: ObservationKey(object: object, keyPath: keyPath)) })
    }

    /// Stops observing `keyPath` (nil: the whole document) under `prefix`.
    public func unobserve(prefix: String, keyPath: String?) {
        let key = ObservationKey(object: prefix, keyPath: keyPath, isPrefix: true)
        end(registrations.withLock { $0.removeValue(forKey: key) })
    }

    /// Stops observing everything this controller observes under `prefix`.
    public func unobserve(prefix: String) {
        unobserve { $0.isPrefix && $0.object == prefix }
    }

    /// Stops observing every key path of `object`, and its whole document.
    public func unobserve(_ object: String) {
        unobserve { !$0.isPrefix && $0.object == object }
    }

    private func unobserve(where matches: (ObservationKey) -> Bool) {
        let removed = registrations.withLock { registrations in
            let keys = registrations.keys.filter(matches)
            return keys.compactMap { registrations.removeValue(forKey: $0) }
        }
        for registration in removed { end(registration) }
    }

    /// Stops observing everything this controller observes.
    public func unobserveAll() {
        let removed = registrations.withLock { registrations in
            defer { registrations.removeAll() }
            return Array(registrations.values)
        }
        for registration in removed { end(registration) }
    }

    private func end(_ registration: Registration?) {
        guard let registration else { return }
        registration.sink.deactivate()
        connection.core.unsubscribe(registration.subscription)
    }

    // MARK: Called by the sinks, on `queue`

    /// A change arrived for an observer that is gone: nothing more is wanted.
    func observerIsGone() { unobserveAll() }

    /// A sink ends its observation (its subscriber of every change fell
    /// behind): kvod and the connection stop sending it changes at once; the
    /// error reaches the handler after the changes held (``observationFailed(_:sink:_:)``).
    /// Called on the connection's reader thread.
    func stopDelivery(_ key: ObservationKey, sink: ControllerSink<Observer>) {
        let subscription = registrations.withLock { $0[key]?.sink === sink ? $0[key]?.subscription : nil }
        if let subscription { connection.core.unsubscribe(subscription) }
    }

    /// An observation ended on its own: forget it and tell the error handler.
    func observationFailed(_ key: ObservationKey, sink: ControllerSink<Observer>, _ error: KVOClientError) {
        let removed = registrations.withLock { registrations -> Bool in
            guard registrations[key]?.sink === sink else { return false }
            registrations[key] = nil
            return true
        }
        guard removed, let observer = weakObserver else { return }
        if error.isConnectionError, reportedConnectionError.exchange(true, ordering: .relaxed) { return }
        if let errorHandler {
            errorHandler(observer, error)
        } else {
            let line = "KVOController: observation of \(key.description) ended: \(error)\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// The observer's type and what the controller observes, for the debugger.
    public var debugDescription: String {
        let keys = registrations.withLock { $0.keys.map(\.description).sorted() }
        let name = weakObserver.map { "\(type(of: $0))" } ?? "nil"
        return "<KVOController observer=\(name) observing=[\(keys.joined(separator: ", "))]>"
    }
}
