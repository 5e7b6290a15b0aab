@_spi(Benchmarks) import KVOEngine

/// An engine holding one array of `count` integers that `observers` clients
/// observe, each at `keyPath` (`v.@sum`: computed; `v`: the array itself);
/// ``change()`` replaces one element and drains every output. Issue 15: the
/// cost of keeping `@sum` up to date per change.
final class ComputedFixture: @unchecked Sendable {
    // @unchecked: as DispatchFixture.
    let count: Int
    let observers: Int
    let keyPath: String
    private var engine: Engine?
    private var setter: ClientController?
    private var clients: [ClientController] = []
    private var sequence = 0
    private let lines: [[UInt8]]

    init(count: Int, observers: Int, keyPath: String) {
        self.count = count
        self.observers = observers
        self.keyPath = keyPath
        lines = (0..<64).map {
            Array(#"{"op":"replace","object":"cart","keyPath":"v","index":\#($0 * 1_531 % count),"value":\#($0)}"#.utf8)
        }
    }

    func build() {
        let engine = Engine()
        let setter = engine.makeClient()
        let array = "[" + (0..<count).map(String.init).joined(separator: ",") + "]"
        Array(#"{"op":"set","object":"cart","keyPath":"v","value":\#(array)}"#.utf8).withUnsafeBytes {
            engine.handle(line: $0, from: setter)
        }
        for _ in 0..<observers {
            let observer = engine.makeClient()
            observer.observe("cart", keyPath: try! ObservedPath(parsing: keyPath), options: [.new, .old], context: nil)
            clients.append(observer)
        }
        setter.output.removeAll(keepingCapacity: true)
        self.setter = setter
        self.engine = engine
    }

    func change() {
        guard let engine, let setter else { return }
        sequence &+= 1
        lines[sequence & 63].withUnsafeBytes { engine.handle(line: $0, from: setter) }
        setter.output.removeAll(keepingCapacity: true)
        for client in clients { client.output.removeAll(keepingCapacity: true) }
    }

    func tearDown() {
        for client in clients { engine?.closeClient(client) }
        if let setter { engine?.closeClient(setter) }
        clients = []
        setter = nil
        engine = nil
    }
}
