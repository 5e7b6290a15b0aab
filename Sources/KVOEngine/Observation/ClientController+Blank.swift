extension ClientController {
    /// Whether the client holds nothing a next request could see, as a new
    /// client would (``Engine/setAside(_:)``): not closed nor being
    /// disconnected nor congested, no output, no observation (none still
    /// leaving the index either), no event held or paced, no throttle, no
    /// wait of its own or for others, no pipelined or parked request, no
    /// backup, no ack.
    var isBlank: Bool {
        !isClosed && disconnectReason == nil && !isCongested && output.isEmpty
            && infos.count == 0 && firstLiveSerial == 0 && creationOrder == nil
            && held.count == 0 && pacedInitials.isEmpty && throttles.isEmpty
            && waitParts == nil && !isAwaiting && replyAfterOutcome == nil && !holdsPipelinedWork
            && ackedSeq == 0
    }
}
