import Foundation
import HAP
import TestSupport

/// Pairs with the peer, retrying a few times on an authentication error: HAP-python drops
/// leading zero bytes of SRP values the specification pads, so about 1 pair-setup in 85 fails
/// against a correct controller (field notes). A fresh connection, salt and keys each time.
func pairWithPeer(_ peer: HAPPeer, controller: ControllerIdentity = .generate()) async throws -> (ControllerIdentity, AccessoryPairing) {
    var lastError: HAPError?
    for _ in 0..<5 {
        let client = try await Client.connect(host: peer.host, port: peer.port)
        defer { client.close() }
        let result: Result<AccessoryPairing, HAPError>
        do {
            result = .success(try await client.pairSetup(code: peer.pincode, controller: controller))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let pairing): return (controller, pairing)
        case .failure(let error) where error.pairingError == .authentication: lastError = error
        case .failure(let error): throw error
        }
    }
    throw lastError ?? HAPError(.pairing, "pair-setup failed")
}

/// A verified session with the peer.
func session(with peer: HAPPeer, _ controller: ControllerIdentity, _ pairing: AccessoryPairing) async throws -> Client {
    try await Client.session(host: peer.host, port: peer.port, controller: controller, accessory: pairing)
}

/// The address of the characteristic of `type` (short HAP form, `25`) in the accessory `aid`.
func address(_ database: [AccessoryDescription], aid: Int, type: String) throws -> CharacteristicAddress {
    let full = AccessoryDescription.fullUUID(type)
    guard let accessory = database.first(where: { $0.aid == aid }),
          let characteristic = accessory.services.flatMap(\.characteristics).first(where: { $0.type == full }) else {
        throw HAPError(.malformed, "the peer has no characteristic \(type) on accessory \(aid)")
    }
    return CharacteristicAddress(aid: aid, iid: characteristic.iid)
}

/// Waits for the first element of `stream` that satisfies `predicate`, at most `timeout`.
func first<Element: Sendable>(in stream: AsyncStream<Element>, within timeout: Duration = HangGuard.standard,
                              where predicate: @escaping @Sendable (Element) -> Bool) async throws -> Element {
    try await withThrowingTaskGroup(of: Element?.self) { group in
        group.addTask {
            for await element in stream where predicate(element) { return element }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let found = try await group.next() ?? nil else {
            throw HAPError(.timeout, "nothing matching arrived within \(timeout)")
        }
        return found
    }
}

/// Short HAP type codes used in the tests.
enum PeerType {
    static let on = "25"
    static let brightness = "8"
    static let currentTemperature = "11"
    static let lockTargetState = "1E"
    static let lockCurrentState = "1D"
    static let name = "23"
    static let identify = "14"
}

/// Everything a stream delivers, kept by one consumer, so a test can wait for several things
/// in turn (an `AsyncStream` allows one consumer, and a cancelled wait would end it).
final class EventLog<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []
    private var waiters: [(predicate: @Sendable ([Element]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    private var consumer: Task<Void, Never>?

    init(_ stream: AsyncStream<Element>) {
        consumer = Task { [weak self] in
            for await element in stream { self?.append(element) }
        }
    }

    deinit { consumer?.cancel() }

    var all: [Element] { lock.withLock { elements } }

    private func append(_ element: Element) {
        let ready = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            elements.append(element)
            let (met, waiting) = (waiters.filter { $0.predicate(elements) }, waiters.filter { !$0.predicate(elements) })
            waiters = waiting
            return met.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Waits until the elements so far satisfy `predicate`, at most `timeout`; false if they never did.
    @discardableResult
    func wait(within timeout: Duration = HangGuard.standard, until predicate: @escaping @Sendable ([Element]) -> Bool) async -> Bool {
        let satisfied = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let now = self.lock.withLock { () -> Bool in
                        if predicate(self.elements) { return true }
                        self.waiters.append((predicate, continuation))
                        return false
                    }
                    if now { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                // The waiter above is parked on a continuation: release it so the group can end.
                self.releaseWaiters()
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        return satisfied
    }

    /// Wakes waiters whose wait already gave up (their result is ignored).
    private func releaseWaiters() {
        let stale = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            defer { waiters.removeAll() }
            return waiters.map(\.continuation)
        }
        for continuation in stale { continuation.resume() }
    }
}
