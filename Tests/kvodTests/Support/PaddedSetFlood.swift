import KVOTestSupport

/// Sets that congest an observer that does not read: `rounds` sets of each of
/// `keys` of object `o`, round-robin, pipelined on a connection of their own,
/// each value `{"n":<index>,"pad":<200 bytes>}` (n counts the sets from 0), so
/// that under small output limits kvod starts holding the observer's events.
/// Returns once kvod logs that the observer is not keeping up; the setter's
/// connection, which must stay open while kvod reads its sets, is returned.
func floodPaddedSets(_ kvod: KVODProcess, keys: [String], rounds: Int) throws -> LineClient {
    let setter = try LineClient(path: kvod.socketPath)
    let padding = String(repeating: "x", count: 200)
    try setter.pipeline(count: rounds * keys.count) { index in
        #"{"op":"set","object":"o","keyPath":"\#(keys[index % keys.count])","value":{"n":\#(index),"pad":"\#(padding)"}}"#
    }
    _ = try kvod.waitForLog(containing: "is not keeping up")
    return setter
}
