import NIOCore
import Synchronization
import Wire

/// A verified HAP-over-CoAP session with a Thread accessory (as border routers put them on the
/// home's IPv6 network; mDNS `_hap._udp`): pair-verify on `POST /2`, then every request is one
/// encrypted `POST /` carrying HAP PDUs (``HAPPDU``), and the accessory's events arrive as
/// encrypted `PUT /` requests to this session's socket.
///
/// HAP over CoAP addresses characteristics by instance id alone: the accessory database
/// (``accessoryDatabase(timeout:)``) is read first, which also tells each characteristic's binary
/// format. Requests go one at a time, in the order made; one that gets no answer, or that the
/// accessory no longer knows the session for (4.04), ends the session.
public final class CoAPSession: Sendable {
    public let host: String
    public let port: Int
    /// Values the accessory reports by itself, for the characteristics subscribed to; ends when
    /// the session ends.
    public let events: AsyncStream<[CharacteristicValue]>

    private struct State {
        var send: PDUCipher
        var receive: PDUCipher
        var nextTransaction = UInt8.random(in: 0...UInt8.max)
    }

    private let endpoint: CoAPEndpoint
    private let receiver: CoAPEventReceiver
    private let gate = RequestGate()
    private let state: Mutex<State>
    private let end = SessionEnd()

    private init(endpoint: CoAPEndpoint, receiver: CoAPEventReceiver, keys: SessionKeys) {
        self.host = endpoint.host
        self.port = endpoint.port
        self.endpoint = endpoint
        self.receiver = receiver
        self.events = receiver.events
        self.state = Mutex(State(send: PDUCipher(key: keys.controllerToAccessory), receive: PDUCipher(key: keys.accessoryToController)))
    }

    /// Opens a socket for the accessory at `host`:`port`, verifies the pairing (pair-verify M1-M4
    /// on `POST /2`) and returns the encrypted session.
    /// - Throws: ``HAPError`` if the accessory does not answer in `timeout`, is not the one
    ///   paired, or no longer knows the controller.
    public static func open(host: String, port: Int, controller: ControllerIdentity, accessory: AccessoryPairing,
                            timeout: Duration = .seconds(8), group: any EventLoopGroup = Client.eventLoopGroup) async throws(HAPError) -> CoAPSession {
        let receiver = CoAPEventReceiver()
        let endpoint = try await CoAPEndpoint.open(host: host, port: port, group: group) { receiver.receive($0) }
        do {
            let keys = try await CoAPPairingChannel(endpoint: endpoint).performPairVerify(controller: controller, accessory: accessory,
                                                                                        deadline: .now + timeout)
            receiver.start(key: keys.accessoryEvents)
            let session = CoAPSession(endpoint: endpoint, receiver: receiver, keys: keys)
            endpoint.closeFuture.whenComplete { _ in session.fail(HAPError(.connection, "the session with [\(host)]:\(port) was closed")) }
            return session
        } catch {
            endpoint.close()
            throw error
        }
    }

    // MARK: The session's life

    /// Whether the session is still open.
    public var isOpen: Bool { end.reason == nil }

    /// Ends the session: requests waiting fail, ``events`` ends. Idempotent.
    public func close() {
        fail(HAPError(.connection, "the session with [\(host)]:\(port) was closed"))
    }

    /// Waits until the session ends and tells why.
    public func closed() async -> HAPError {
        await end.wait()
    }

    private func fail(_ error: HAPError) {
        guard end.recordFirst(error).isFirst else { return }
        endpoint.close()
        receiver.finish()
    }

    // MARK: Encrypted requests

    /// Sends PDUs in one encrypted `POST /` and returns their responses, in order. Anything that
    /// leaves the two sides' message counters in doubt (no answer, an answer that does not
    /// decrypt or does not match) ends the session.
    func send(_ requests: [HAPPDU.Request], timeout: Duration) async throws(HAPError) -> [HAPPDU.Response] {
        await gate.enter()
        defer { gate.leave() }
        let (sealed, transactions) = try seal(requests)
        let response: CoAPMessage
        do {
            response = try await endpoint.request(.post, path: "", payload: sealed, timeout: timeout)
        } catch {
            fail(error)
            throw error
        }
        guard response.code != .notFound else {
            throw ending(HAPError(.connection, "[\(host)]:\(port) no longer knows this session (CoAP 4.04)"))
        }
        guard response.code.isSuccess else {
            throw ending(HAPError(.status, "[\(host)]:\(port) answered CoAP \(response.code) to an encrypted request"))
        }
        do throws(HAPError) {
            let plaintext = try state.withLock { state throws(HAPError) in try state.receive.open(response.payload) }
            let responses = try HAPPDU.responses(in: plaintext)
            guard responses.map(\.transaction) == transactions else {
                throw HAPError(.malformed, "[\(host)]:\(port) answered transactions \(responses.map(\.transaction)) to \(transactions)")
            }
            return responses
        } catch {
            throw ending(error)
        }
    }

    private func seal(_ requests: [HAPPDU.Request]) throws(HAPError) -> ([UInt8], [UInt8]) {
        if let reason = end.reason { throw reason }
        return state.withLock { state in
            var numbered = requests
            for index in numbered.indices {
                numbered[index].transaction = state.nextTransaction
                state.nextTransaction &+= 1
            }
            return (state.send.seal(HAPPDU.encode(numbered)), numbered.map(\.transaction))
        }
    }

    private func ending(_ error: HAPError) -> HAPError {
        fail(error)
        return error
    }

    /// The characteristics' formats, known once the database was read.
    var formats: [CharacteristicAddress: GATTFormat] { receiver.formats }

    /// The address `iid` has (HAP over CoAP serves one accessory; a database with more is
    /// searched in order).
    func address(ofIID iid: UInt16) -> CharacteristicAddress? {
        receiver.address(ofIID: iid)
    }

    func remember(_ database: GATTDatabase) {
        receiver.remember(database)
    }

    /// The address of the first characteristic of `type` (a full UUID).
    func address(ofType type: String) -> CharacteristicAddress? {
        receiver.address(ofType: type)
    }
}

/// The `PUT /` requests a session's accessory sends by itself: decrypted with the event key and
/// counter, their values handed to ``events``. Answered 2.03 Valid, or 4.04 when one does not
/// decrypt (the accessory then knows its events are lost), on the endpoint's event loop.
final class CoAPEventReceiver: Sendable {
    private struct State {
        var cipher: PDUCipher?
        var formats: [CharacteristicAddress: GATTFormat] = [:]
        var byIID: [UInt16: CharacteristicAddress] = [:]
        var byType: [String: CharacteristicAddress] = [:]
    }

    let events: AsyncStream<[CharacteristicValue]>
    private let continuation: AsyncStream<[CharacteristicValue]>.Continuation
    private let state = Mutex(State())

    init() {
        (events, continuation) = AsyncStream.makeStream()
    }

    func start(key: [UInt8]) {
        state.withLock { $0.cipher = PDUCipher(key: key) }
    }

    func finish() {
        continuation.finish()
    }

    func remember(_ database: GATTDatabase) {
        state.withLock { state in
            state.formats = database.formats
            state.byIID = [:]
            state.byType = [:]
            for accessory in database.accessories {
                for characteristic in accessory.services.flatMap(\.characteristics) where state.byType[characteristic.type] == nil {
                    state.byType[characteristic.type] = CharacteristicAddress(aid: accessory.aid, iid: characteristic.iid)
                }
            }
            for address in database.formats.keys.sorted() where state.byIID[UInt16(truncatingIfNeeded: address.iid)] == nil {
                state.byIID[UInt16(truncatingIfNeeded: address.iid)] = address
            }
        }
    }

    var formats: [CharacteristicAddress: GATTFormat] { state.withLock(\.formats) }

    func address(ofIID iid: UInt16) -> CharacteristicAddress? {
        state.withLock { $0.byIID[iid] }
    }

    func address(ofType type: String) -> CharacteristicAddress? {
        state.withLock { $0.byType[type] }
    }

    func receive(_ message: CoAPMessage) -> CoAPMessage.Code? {
        guard message.path.isEmpty, message.code == .put || message.code == .post else { return .methodNotAllowed }
        let decoded = state.withLock { state -> (events: [HAPPDU.Event], formats: [CharacteristicAddress: GATTFormat], byIID: [UInt16: CharacteristicAddress])? in
            guard var cipher = state.cipher, let plaintext = try? cipher.open(message.payload),
                  let events = try? HAPPDU.events(in: plaintext) else { return nil }
            state.cipher = cipher
            return (events, state.formats, state.byIID)
        }
        guard let decoded else { return .notFound }
        let values = decoded.events.compactMap { event -> CharacteristicValue? in
            guard let address = decoded.byIID[event.iid], let format = decoded.formats[address],
                  let bytes = try? HAPPDU.value(inBody: event.body), let value = (try? format.json(from: bytes)) ?? nil else { return nil }
            return CharacteristicValue(address: address, value: value)
        }
        if !values.isEmpty { continuation.yield(values) }
        return .valid
    }
}
