// libFuzzer target: the inbound MQTT codec (Sources/Gateway/Inbound/Inbound.swift), which reads
// every message the gateway receives into what it asks for, with the topic rules of MQTT's
// TopicName. Input: a topic and a payload, split at the first NUL byte.
// Properties: validating and decoding never crash; a valid topic decodes to exactly one form; a
// command's path is the topic's levels between the base and the verb; a request's body is the
// payload's JSON object when it is one.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInbound(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let split = bytes.firstIndex(of: 0) ?? bytes.endIndex
    let topicText = String(decoding: bytes[..<split], as: UTF8.self)
    let payload = Array(bytes[min(split + 1, bytes.endIndex)...])
    guard let topic = try? TopicName(topicText) else { return 0 }
    let codec = InboundCodec(base: "homegate", homeAssistantStatus: "homeassistant/status")
    let message = Message(topic: topic, payload: payload)
    switch codec.decode(message) {
    case .command(let command):
        // Levels are split at the `/` byte (a combining mark after `/` is not part of it).
        let levels = topic.string.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { String(Substring($0)) }
        if Array(levels.dropFirst().dropLast()) != command.path.map(String.init) {
            fatalError("\(topic.string): path \(command.path)")
        }
    case .request(let request):
        if JSON.body(payload) != request.body { fatalError("\(topic.string): body \(String(describing: request.body))") }
    case .shortcut, .syncMarker, .homeAssistantOnline, .state, .foreign:
        break
    }
    return 0
}
