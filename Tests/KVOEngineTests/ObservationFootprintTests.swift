#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import KVOEngine

/// What one observation of a distinct key path holds in malloc'd bytes: its
/// ``ObservationInfo`` and its leaf ``PathNode``. A million of them make
/// kvod-bench's memory scenario (issue 5: at most 256 bytes of resident
/// memory per observation), so a field added to either shows here first.
@Suite struct ObservationFootprintTests {
    let fixture = EngineFixture()

    /// The bytes malloc reserved for an instance (its usable size; glibc's
    /// `malloc_usable_size`, which the Glibc module does not export).
    private func mallocSize(_ object: AnyObject) throws -> Int {
        typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
        let symbol = try #require(dlsym(nil, "malloc_usable_size"))
        return unsafeBitCast(symbol, to: UsableSize.self)(Unmanaged.passUnretained(object).toOpaque())
    }

    @Test func aLeafNodeWithoutEventsFitsMallocsSixtyFourByteChunk() throws {
        let client = fixture.makeClient()
        // malloc may hand out a larger free chunk whole when splitting it would
        // leave too small a rest, so one instance's usable size can exceed its
        // class's: the smallest of several fresh ones is the class's.
        var leaves: [Int] = [], infos: [Int] = [], parents: [Int] = []
        for index in 0..<16 {
            let info = try #require(client.observe("o", keyPath: keyPath("a\(index).b"), options: [.new], context: nil))
            let leaf = try #require(info.node)
            let parent = try #require(leaf.parent)
            #expect(parent.hasChildren)
            try leaves.append(mallocSize(leaf))
            try infos.append(mallocSize(info))
            try parents.append(mallocSize(parent))
        }
        // 56 usable bytes: malloc's 64-byte chunk. Children, prior counts,
        // the event head and computed paths wait in the node's extras.
        #expect(try #require(leaves.min()) <= 56)
        #expect(try #require(infos.min()) <= 72)
        // A parent keeps its children in its extras: still the same node size.
        #expect(try #require(parents.min()) <= 56)
    }

    @Test func aNodeKeepsWhatItsExtrasHoldAfterTheyAreMade() throws {
        let client = fixture.makeClient()
        let other = fixture.makeClient()
        let prior = try #require(client.observe("o", keyPath: keyPath("p"), options: [.new, .prior], context: nil))
        #expect(other.observe("o", keyPath: keyPath("p"), options: [.new, .prior], context: nil) != nil)
        let node = try #require(prior.node)
        #expect(node.priorObservers == 2)
        let scoped = try #require(client.observe(.prefix("q/"), keyPath: keyPath("x"), options: [.new],
                                                 context: nil))
        #expect(scoped.node?.isPrefixScope == true)
        #expect(scoped.node?.parent?.isPrefixScope == true)
        let computed = try #require(client.observe("o", keyPath: keyPath("tags.@count"), options: [.new],
                                                   context: nil))
        #expect(computed.node?.computed != nil)
        #expect(computed.node?.parent?.computed == nil)
        other.unobserve("o", keyPath: keyPath("p"))
        #expect(node.priorObservers == 1)
    }
}
