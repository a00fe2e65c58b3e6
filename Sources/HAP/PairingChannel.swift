import Wire
/// The plaintext exchange the pairing procedures run over: one TLV8 message to the accessory and
/// its TLV8 answer. HAP over IP posts to `/pair-setup` and `/pair-verify` (``Client``), HAP over
/// CoAP to `/1` and `/2` (``CoAPPairingChannel``); pair-setup and pair-verify are written once,
/// here, over either.
protocol PairingChannel: Sendable {
    /// Sends one message of `procedure` and returns the accessory's answer.
    func exchange(_ procedure: PairingProcedure, _ message: TLV8, timeout: Duration) async throws(HAPError) -> TLV8
}

/// The two plaintext pairing procedures.
enum PairingProcedure: String, Sendable {
    case setup = "pair-setup"
    case verify = "pair-verify"
}

extension PairingChannel {
    /// Pair-setup M1-M6 with the setup code, each exchange within `timeout`.
    /// - Returns: the accessory's pairing id and long-term public key, to store.
    func performPairSetup(code: String, controller: ControllerIdentity, timeout: Duration) async throws(HAPError) -> AccessoryPairing {
        var machine = try PairSetup(setupCode: code, controller: controller)
        var message = machine.start()
        while true {
            switch try machine.receive(try await exchange(.setup, message, timeout: timeout)) {
            case .send(let next): message = next
            case .paired(let pairing): return pairing
            }
        }
    }

    /// Pair-verify M1-M4, done by `deadline`.
    /// - Returns: the session's keys.
    func performPairVerify(controller: ControllerIdentity, accessory: AccessoryPairing, deadline: ContinuousClock.Instant)
        async throws(HAPError) -> SessionKeys {
        var machine = PairVerify(controller: controller, accessory: accessory)
        var message = machine.start()
        while true {
            let remaining = deadline - .now
            guard remaining > .zero else { throw HAPError(.timeout, "pair-verify took too long") }
            switch try machine.receive(try await exchange(.verify, message, timeout: remaining)) {
            case .send(let next): message = next
            case .verified(let keys): return keys
            }
        }
    }
}
