/// The connections that used up their ``TurnBudget`` and wait to be read
/// again: a zero-delay timer (so that the loop polls without sleeping) hands
/// each its waiting lines at the start of the next turn, before the poll
/// serves everyone else's. Loop-confined.
///
/// The timer is armed from the prepare hook, once per turn: libuv 1.44 runs
/// a zero-delay timer restarted from its own callback again at once, which
/// would spin within one turn.
final class TurnYield {
    private let timer: UVTimer
    private var waiting: [ClientConnection] = []

    init(loop: UVLoop) {
        timer = UVTimer(loop: loop)
    }

    /// `connection` continues next turn (once, however often it asks).
    func continueNextTurn(_ connection: ClientConnection) {
        guard !connection.isWaitingForTurn else { return }
        connection.isWaitingForTurn = true
        waiting.append(connection)
    }

    /// Arms the timer if a connection waits (the loop's prepare hook, last).
    func armIfWaiting() {
        guard !waiting.isEmpty else { return }
        timer.start(afterMilliseconds: 0) { [unowned self] in self.resume() }
    }

    private func resume() {
        let resuming = waiting
        waiting.removeAll(keepingCapacity: true)
        for connection in resuming {
            connection.isWaitingForTurn = false
            connection.continueTurn()
        }
    }

    func close() {
        waiting = []
        timer.close()
    }
}
