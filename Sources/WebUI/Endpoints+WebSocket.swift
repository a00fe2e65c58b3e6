import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOWebSocket

extension Endpoints {
    /// `/ws`: a page's live feed. Upgraded only for a valid session from this site (the Origin is
    /// checked: another site's page cannot open it with the person's cookie). The server sends
    /// the broker connection's state, every retained message under the base, `synced`, then each
    /// message as it arrives; what the page sends is ignored. Closed with 1008 when the session
    /// signs out, 1012 when the broker connection is lost, 1013 when the page falls too far behind.
    func webSocketRouter() -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("/ws") { request, _ in
            guard originMatches(request), await currentSession(request) != nil, await feed.isConnected else { return .dontUpgrade }
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            guard let (token, _) = await currentSession(context.request),
                  let (id, first, stream) = await feed.open(session: token) else {
                try await outbound.close(.policyViolation, reason: "sign in first")
                return
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Reads (and drops) what the page sends, until it closes.
                group.addTask { for try await _ in inbound {} }
                group.addTask {
                    for frame in first { try await outbound.write(.text(frame)) }
                    for await frame in stream { try await outbound.write(.text(frame)) }
                    // The feed ended this page: say why.
                    let (code, reason) = Self.closing(await feed.close(id))
                    try await outbound.close(code, reason: reason)
                }
                defer { group.cancelAll() }
                try await group.next()
            }
            await feed.close(id)
        }
        return router
    }

    private static func closing(_ ending: LiveFeed.Ending?) -> (WebSocketErrorCode, String) {
        switch ending {
        case .signedOut: (.policyViolation, "signed out")
        case .brokerLost: (.unknown(1012), "the gateway lost its broker connection")
        case .tooSlow: (.unknown(1013), "the page fell too far behind; reconnect")
        case .stopped, nil: (.goingAway, "the gateway stops")
        }
    }
}
