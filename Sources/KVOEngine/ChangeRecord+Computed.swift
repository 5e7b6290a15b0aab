/// The values a computed key path (`tags.@count`) had around a change, for
/// the events that are encoded after the fact: held ones and replayed ones.
extension ChangeRecord {
    /// The values before and after this change at `keyPath`, a computed key
    /// path at or under the changed path, given the value of its array
    /// after the change (`arrayAfter`).
    func computedValues(_ computed: ComputedKeyPath, keyPath: [String],
                        arrayAfter: JSONValue?) -> (old: JSONValue?, new: JSONValue?) {
        if kind == .setting {
            let rest = keyPath[path.count...]
            return (JSONValue.value(in: old, at: rest), JSONValue.value(in: new, at: rest))
        }
        // An insert, remove or replace of the array itself; nothing lies under an array.
        guard computed.baseCount == path.count else {
            let value = computed.evaluate(over: nil)
            return (value, value)
        }
        let before = valueBefore(at: Array(keyPath.prefix(computed.baseCount)), after: arrayAfter)
        return (computed.evaluate(over: before), computed.evaluate(over: arrayAfter))
    }
}
