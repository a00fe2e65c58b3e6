import Foundation
import Glibc
import TestSupport

/// A WebSocket client small enough to read (RFC 6455, text frames only), for the page's feed
/// tests: unlike a library client it sends exactly the headers a browser would (`Origin` with
/// the port), and it reads on a thread of its own with blocking calls.
final class RawWebSocket: @unchecked Sendable {
    private let socket: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port` and asks for the upgrade with `headers`.
    /// - Throws: ``FixtureError`` with the status line when the server does not switch protocols.
    init(port: Int, path: String, headers: [String]) throws {
        socket = try IdleConnection(port: port).descriptor
        let request = (["GET \(path) HTTP/1.1", "Host: 127.0.0.1:\(port)", "Connection: Upgrade", "Upgrade: websocket",
                        "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="] + headers + ["", ""])
            .joined(separator: "\r\n")
        try send(Array(request.utf8))
        let head = try readHead()
        guard head.hasPrefix("HTTP/1.1 101") else {
            close(socket)
            throw FixtureError("no upgrade: \(head.split(separator: "\r\n").first ?? "")")
        }
    }

    deinit { close(socket) }


    /// Reads frames until the server closes; calls `onText` with each text message. Returns the
    /// close code (nil if the connection ended without a close frame).
    func readUntilClosed(onText: (String) -> Void) -> Int? {
        while let (opcode, payload) = try? readFrame() {
            switch opcode {
            case 0x1: onText(String(decoding: payload, as: UTF8.self))
            case 0x8: return payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : 1005
            case 0x9: try? sendFrame(opcode: 0xA, payload: payload)
            default: break
            }
        }
        return nil
    }

    /// Sends a close frame (normal closure, 1000).
    func sendClose() {
        try? sendFrame(opcode: 0x8, payload: [0x03, 0xE8])
    }

    private func sendFrame(opcode: UInt8, payload: [UInt8]) throws {
        // A client masks what it sends; payloads here are under 126 bytes.
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        let masked = payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try send([0x80 | opcode, 0x80 | UInt8(payload.count)] + mask + masked)
    }

    private func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw FixtureError("send failed") }
            sent += count
        }
    }

    private func readHead() throws -> String {
        while true {
            if let end = buffer.indices.dropLast(3).first(where: { buffer[$0..<$0 + 4] == [13, 10, 13, 10] }) {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                return head
            }
            try fill()
        }
    }

    private func readFrame() throws -> (UInt8, [UInt8]) {
        let first = try take(2)
        var length = Int(first[1] & 0x7F)
        if length == 126 { length = try take(2).reduce(0) { $0 << 8 | Int($1) } }
        if length == 127 { length = try take(8).reduce(0) { $0 << 8 | Int($1) } }
        return (first[0] & 0x0F, try take(length))
    }

    private func take(_ count: Int) throws -> [UInt8] {
        while buffer.count < count { try fill() }
        let bytes = Array(buffer.prefix(count))
        buffer.removeFirst(count)
        return bytes
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw FixtureError("connection closed") }
        buffer += chunk[..<count]
    }
}
