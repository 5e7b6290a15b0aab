#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Values kept under prefixes of object names, found by every prefix of one
/// name: the roots of the prefix observations.
///
/// A radix tree over the UTF-8 bytes of the names in NFC, so that a prefix
/// and a name match however each spells an accented letter. Finding the
/// prefixes of a name walks one path of it, so a change costs the branch
/// points on its name's path and the prefixes that match it, never the
/// prefixes that do not: with 100,000 prefixes under `other/`, a change to
/// `person/1` looks at one child of the root and stops.
final class PrefixTrie<Value: AnyObject> {
    private final class Node {
        /// The bytes on the edge from the parent (the root's is empty).
        var label: [UInt8]
        var value: Value?
        /// Ordered by the first byte of their labels, which differ.
        var children: [Node] = []

        init(label: [UInt8], value: Value? = nil) {
            self.label = label
            self.value = value
        }

        /// The position of the child whose label starts with `byte`, or where it would go.
        func childPosition(_ byte: UInt8) -> (index: Int, found: Bool) {
            var low = 0
            var high = children.count
            while low < high {
                let middle = (low + high) / 2
                let first = children[middle].label[0]
                if first == byte { return (middle, true) }
                if first < byte { low = middle + 1 } else { high = middle }
            }
            return (low, false)
        }
    }

    private let root = Node(label: [])
    /// How many prefixes hold a value.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The value kept under exactly `prefix` (in any spelling).
    func value(for prefix: String) -> Value? {
        return CanonicalName.withNFC(prefix) { bytes in
            guard let (node, matched) = deepest(bytes), matched == bytes.count else { return nil }
            return node.value
        }
    }

    /// Keeps `value` under `prefix`, replacing what was there.
    func set(_ value: Value, for prefix: String) {
        CanonicalName.withNFC(prefix) { bytes in
            var node = root
            var position = 0
            while position < bytes.count {
                let (index, found) = node.childPosition(bytes[position])
                guard found else {
                    node.children.insert(Node(label: Array(bytes[position...]), value: value), at: index)
                    count += 1
                    return
                }
                let child = node.children[index]
                let common = commonLength(child.label, bytes, from: position)
                if common < child.label.count {
                    // Split the edge where the prefix leaves it.
                    let branch = Node(label: Array(child.label[..<common]))
                    child.label.removeFirst(common)
                    branch.children = [child]
                    node.children[index] = branch
                }
                node = node.children[index]
                position += common
            }
            if node.value == nil { count += 1 }
            node.value = value
        }
    }

    /// Forgets what is kept under exactly `prefix`.
    func removeValue(for prefix: String) {
        CanonicalName.withNFC(prefix) { bytes in
            var path: [(parent: Node, index: Int)] = []
            var node = root
            var position = 0
            while position < bytes.count {
                let (index, found) = node.childPosition(bytes[position])
                guard found else { return }
                let child = node.children[index]
                guard commonLength(child.label, bytes, from: position) == child.label.count else { return }
                path.append((node, index))
                node = child
                position += child.label.count
            }
            guard node.value != nil else { return }
            node.value = nil
            count -= 1
            // Drop the emptied leaf, and fold a node left with one child and no value into it.
            guard let (parent, index) = path.last else { return }
            if node.children.isEmpty {
                parent.children.remove(at: index)
                if parent !== root, parent.value == nil, parent.children.count == 1 { absorbOnlyChild(of: parent) }
            } else if node.children.count == 1 {
                absorbOnlyChild(of: node)
            }
        }
    }

    private func absorbOnlyChild(of node: Node) {
        let child = node.children[0]
        node.label += child.label
        node.value = child.value
        node.children = child.children
    }

    /// Calls `body` with the value of every kept prefix of `name`, shortest first.
    @inline(__always)
    func forEachMatch(of name: String, _ body: (Value) -> Void) {
        guard count > 0 else { return }
        CanonicalName.withNFC(name) { bytes in
            if let value = root.value { body(value) }
            walk(bytes) { node, _ in
                if let value = node.value { body(value) }
            }
        }
    }

    /// Whether any kept prefix is a prefix of `name`.
    func hasMatch(of name: String) -> Bool {
        var found = false
        forEachMatch(of: name) { _ in found = true }
        return found
    }

    /// Every kept value, by prefix in NFC (a full walk; for inspection).
    var all: [(prefix: String, value: Value)] {
        var result: [(String, Value)] = []
        func walk(_ node: Node, _ bytes: [UInt8]) {
            let here = bytes + node.label
            if let value = node.value { result.append((String(decoding: here, as: UTF8.self), value)) }
            for child in node.children { walk(child, here) }
        }
        walk(root, [])
        return result
    }

    /// The node reached by following `bytes` whole edges, and how many bytes that matched.
    private func deepest(_ bytes: UnsafeBufferPointer<UInt8>) -> (Node, Int)? {
        var reached = (root, 0)
        let whole = walk(bytes) { node, matched in reached = (node, matched) }
        return whole ? reached : nil
    }

    /// Follows `bytes` down whole edges from the root, calling `visit` with
    /// each node reached and how many bytes lead to it. Returns whether every
    /// byte was matched.
    @inline(__always)
    @discardableResult
    private func walk(_ bytes: UnsafeBufferPointer<UInt8>, _ visit: (Node, Int) -> Void) -> Bool {
        var node = root
        var position = 0
        while position < bytes.count {
            let (index, found) = node.childPosition(bytes[position])
            guard found else { return false }
            let child = node.children[index]
            let label = child.label
            guard label.count <= bytes.count - position,
                  label.withUnsafeBytes({ memcmp($0.baseAddress!, bytes.baseAddress! + position, label.count) }) == 0
            else { return false }
            position += label.count
            node = child
            visit(node, position)
        }
        return true
    }

    private func commonLength(_ label: [UInt8], _ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var common = 0
        while common < label.count, start + common < bytes.count, label[common] == bytes[start + common] {
            common += 1
        }
        return common
    }
}
