// docs/CLIENT.md, "Quiet observers: `DeliveryOptions`"; built, not run.
import KVOClient

func ledger(_ connection: KVOConnection) async throws {
    let every = DeliveryOptions(everyChange: true)
    do throws(KVOClientError) {
        for try await change in connection.changes(of: "account/1", keyPath: "balance", options: [.new],
                                                   delivery: every) {
            print(change.seq, change.new ?? .null)
        }
    } catch {
        guard error.code == .limitExceeded else { throw error }
        print("fell behind, start over from a get:", error.message)
    }
}
