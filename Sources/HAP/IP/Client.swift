import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Wire

/// The address of a characteristic on an accessory server: accessory instance id (1 for the
/// accessory itself or a bridge, 2... for bridged accessories) and characteristic instance id.
public struct CharacteristicAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let aid: Int
    public let iid: Int

    public init(aid: Int, iid: Int) {
        self.aid = aid
        self.iid = iid
    }

    public var description: String { "\(aid).\(iid)" }

    public static func < (lhs: CharacteristicAddress, rhs: CharacteristicAddress) -> Bool {
        (lhs.aid, lhs.iid) < (rhs.aid, rhs.iid)
    }
}

/// A characteristic's value as an event or a read reported it.
public struct CharacteristicValue: Sendable, Hashable {
    public let address: CharacteristicAddress
    public let value: JSON

    public init(address: CharacteristicAddress, value: JSON) {
        self.address = address
        self.value = value
    }
}

/// A HAP controller's connection to one accessory server (an accessory or a bridge).
///
/// Connect, then either pair (``pairSetup(code:controller:)``) or verify an existing pairing
/// (``verify(controller:accessory:)``); after verification everything is encrypted and the
/// accessory can be read, written, subscribed to and asked about its pairings. Requests go one
/// at a time, in the order they are made; events arrive through ``events``.
public final class Client: Sendable {
    /// The default wait for an answer.
    public static let defaultTimeout: Duration = .seconds(10)

    public let host: String
    public let port: Int
    let connection: Connection
    private let gate = RequestGate()
    private let eventContinuation: AsyncStream<[CharacteristicValue]>.Continuation
    /// Values the accessory reports by itself (`EVENT/1.0`), for the characteristics subscribed
    /// to; one element per event message. Ends when the connection closes.
    public let events: AsyncStream<[CharacteristicValue]>

    private init(connection: Connection, events: AsyncStream<[CharacteristicValue]>, continuation: AsyncStream<[CharacteristicValue]>.Continuation) {
        self.connection = connection
        self.host = connection.host
        self.port = connection.port
        self.events = events
        self.eventContinuation = continuation
    }

    /// The event loops every connection lives on unless told otherwise: SwiftNIO's shared group
    /// (``NIOSingletons/posixEventLoopGroup``, one thread per core, started once). The web server
    /// (hummingbird) runs on the same group, so HAP adds no threads of its own, however many
    /// devices are connected; a connection's work between reads (open a frame, parse a message,
    /// match it) is a few microseconds, so a core's loop carries many devices.
    public static var eventLoopGroup: any EventLoopGroup { MultiThreadedEventLoopGroup.singleton }

    /// Opens a TCP connection to the accessory server at `host`:`port`, on one of `group`'s
    /// event loops.
    /// - Throws: ``HAPError`` (``HAPError/Kind/connection``) if it cannot be reached in `timeout`.
    public static func connect(host: String, port: Int, timeout: Duration = .seconds(5),
                               group: any EventLoopGroup = Client.eventLoopGroup) async throws(HAPError) -> Client {
        let (events, continuation) = AsyncStream<[CharacteristicValue]>.makeStream()
        let connection = try await Connection.open(host: host, port: port, timeout: timeout, group: group) { message in
            guard let values = try? Client.values(in: message.body), !values.isEmpty else { return }
            continuation.yield(values)
        }
        connection.whenClosed { continuation.finish() }
        return Client(connection: connection, events: events, continuation: continuation)
    }

    /// Closes the connection. Requests waiting fail; ``events`` ends.
    public func close() {
        connection.close()
    }

    /// Waits until the connection closes (the accessory went away, a request timed out, or
    /// ``close()``), and tells why.
    public func closed() async -> HAPError {
        await connection.closed()
    }

    /// Whether the connection is still open.
    public var isOpen: Bool { connection.failure == nil }

    // MARK: Requests

    /// The connection's event loop as a task executor: work run under it
    /// (`withTaskExecutorPreference(client.taskExecutor) { ... }`) makes its requests without a
    /// thread switch.
    public var taskExecutor: any TaskExecutor { connection.taskExecutor }

    /// Sends one request (after the ones before it were answered) and returns the response. It
    /// is written and answered on the connection's event loop (``taskExecutor``); a response
    /// bigger than ``largeBody`` is handed over off the loop, so that parsing it (a database of
    /// 10,000 characteristics is megabytes) never holds the loop's other connections and timers.
    func request(_ request: HTTPRequest, timeout: Duration = Client.defaultTimeout) async throws(HAPError) -> HTTPMessage {
        let response = try await withTaskExecutorPreference(connection.taskExecutor) { () async throws(HAPError) -> HTTPMessage in
            await gate.enter()
            defer { gate.leave() }
            return try await connection.send(request, timeout: timeout)
        }
        if response.body.count > Self.largeBody { await Self.leaveEventLoop() }
        return response
    }

    /// The size above which a response is parsed off the event loop.
    static let largeBody = 16 * 1024

    /// Continues on the global executor.
    @concurrent
    private static func leaveEventLoop() async {}

    /// A TLV8 request (`POST` with `application/pairing+tlv8`), answered by TLV8.
    func tlvRequest(_ path: String, _ body: TLV8, timeout: Duration = Client.defaultTimeout) async throws(HAPError) -> TLV8 {
        let response = try await request(HTTPRequest(method: "POST", path: path, contentType: "application/pairing+tlv8", body: body.encoded()), timeout: timeout)
        guard response.status == 200 || response.status == 470 else {
            throw HAPError(.status, "POST \(path): the accessory answered HTTP \(response.status) \(response.reason)")
        }
        do {
            return try TLV8(decoding: response.body)
        } catch {
            throw HAPError(.malformed, "POST \(path): the accessory's TLV8 does not parse: \(error)")
        }
    }

    /// A JSON request; the parsed body (nil when there is none, as in 204).
    func jsonRequest(_ method: String, _ path: String, _ body: JSON? = nil, timeout: Duration = Client.defaultTimeout) async throws(HAPError) -> (status: Int, body: JSON?) {
        let request = HTTPRequest(method: method, path: path, contentType: body == nil ? nil : "application/hap+json", body: body?.encoded() ?? [])
        let response = try await self.request(request, timeout: timeout)
        guard (200..<300).contains(response.status) else {
            let status = (try? JSON.parse(response.body))?["status"]?.int.flatMap { HAPStatus(rawValue: Int($0)) }
            let detail = status.map { ": \($0)" } ?? ""
            throw HAPError(.status, "\(method) \(path): the accessory answered HTTP \(response.status) \(response.reason)\(detail)", status: status)
        }
        return (response.status, response.body.isEmpty ? nil : try JSON.hapBody(response.body, "\(method) \(path)"))
    }

    /// The characteristics in an event or a response body.
    static func values(in body: [UInt8]) throws(HAPError) -> [CharacteristicValue] {
        guard let entries = try JSON.hapBody(body, "EVENT")["characteristics"]?.array else { return [] }
        return entries.compactMap { entry in
            guard let aid = entry["aid"]?.int, let iid = entry["iid"]?.int, let value = entry["value"] else { return nil }
            return CharacteristicValue(address: CharacteristicAddress(aid: Int(aid), iid: Int(iid)), value: value)
        }
    }
}

/// Lets one request at a time through, in arrival order.
final class RequestGate: Sendable {
    private struct State {
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func enter() async {
        let entered = state.withLock { state in
            if state.busy { return false }
            state.busy = true
            return true
        }
        if entered { return }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.busy {
                    state.waiters.append(continuation)
                    return false
                }
                state.busy = true
                return true
            }
            if now { continuation.resume() }
        }
    }

    func leave() {
        let next = state.withLock { state in
            if state.waiters.isEmpty {
                state.busy = false
                return nil as CheckedContinuation<Void, Never>?
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
