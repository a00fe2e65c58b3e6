import Foundation
import HomeModel
import MQTT
import Wire

/// Inbound routing: every message reaches the engine here, is decoded once by the
/// ``InboundCodec`` and goes to its handler.
extension Gateway {
    /// Routes one received message. Retained messages under the base are remembered for the
    /// synchronisation; a retained command is cleared and runs once.
    func handle(_ message: Message) {
        let inbound = codec.decode(message)
        switch inbound {
        case .foreign:
            return
        case .homeAssistantOnline:
            republishDiscovery()
            return
        case .syncMarker(let marker):
            finishSync(marker: marker)
            return
        default:
            break
        }
        if message.retain {
            brokerHadLastSeen(message)
            // What the broker holds retained (compared with the tree at the next sync marker).
            switch retained.retainedArrived(topic: message.topic.string, payload: message.payload, isCommand: inbound.isCommand) {
            case .recorded: break
            case .skip: return // our own clearing, or a second copy
            case .clearThenRun: send(message.topic, [], retain: true) // a retained command runs once: clear it so it never fires again
            }
        }
        switch inbound {
        case .command(let command): handle(command, from: message)
        case .request(let request): handle(request, from: message)
        case .shortcut(let shortcut): handle(shortcut, from: message)
        case .state, .foreign, .homeAssistantOnline, .syncMarker: break
        }
    }
}
