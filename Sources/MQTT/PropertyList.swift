internal import CMosquitto
import Foundation

/// A libmosquitto property list built from ``Message/Properties``, and the way back.
/// The caller frees what it builds (`mosquitto_publish_v5` does not take ownership).
struct PropertyList {
    var list: OpaquePointer?

    init() {}

    /// Builds the list for MQTT 5; with MQTT 3.1.1 it stays empty (properties do not exist there).
    /// - Throws: ``ClientError`` for a property MQTT cannot carry (a NUL in a text, correlation
    ///   data over 65,535 bytes).
    init(_ properties: Message.Properties, protocolVersion: ProtocolVersion) throws(ClientError) {
        guard protocolVersion == .v5, !properties.isEmpty else { return }
        do {
            try add(properties)
        } catch {
            free()
            throw error
        }
    }

    private mutating func add(_ properties: Message.Properties) throws(ClientError) {
        if let responseTopic = properties.responseTopic {
            try check(mosquitto_property_add_string(&list, Self.id(MQTT_PROP_RESPONSE_TOPIC), responseTopic.string), "response topic")
        }
        if let data = properties.correlationData {
            guard data.count <= Int(UInt16.max) else {
                throw ClientError(.invalidProperty("correlation data is \(data.count) bytes; MQTT allows at most 65535"))
            }
            let rc = data.withUnsafeBytes { bytes in
                mosquitto_property_add_binary(&list, Self.id(MQTT_PROP_CORRELATION_DATA), bytes.baseAddress, UInt16(bytes.count))
            }
            try check(rc, "correlation data")
        }
        for property in properties.userProperties {
            try Self.checkText(property.name, "user property name")
            try Self.checkText(property.value, "user property value")
            try check(mosquitto_property_add_string_pair(&list, Self.id(MQTT_PROP_USER_PROPERTY), property.name, property.value), "user property")
        }
        if let contentType = properties.contentType {
            try Self.checkText(contentType, "content type")
            try check(mosquitto_property_add_string(&list, Self.id(MQTT_PROP_CONTENT_TYPE), contentType), "content type")
        }
        if let expiry = properties.messageExpiryInterval {
            try check(mosquitto_property_add_int32(&list, Self.id(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL), expiry), "message expiry")
        }
        if properties.payloadIsUTF8 {
            try check(mosquitto_property_add_byte(&list, Self.id(MQTT_PROP_PAYLOAD_FORMAT_INDICATOR), 1), "payload format")
        }
    }

    private func check(_ rc: Int32, _ what: String) throws(ClientError) {
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            throw ClientError(.invalidProperty("\(what): \(Library.describe(rc, errno: 0))"))
        }
    }

    private static func checkText(_ text: String, _ what: String) throws(ClientError) {
        if text.utf8.contains(0) { throw ClientError(.invalidProperty("the \(what) contains a NUL character")) }
        if text.utf8.count > Int(UInt16.max) { throw ClientError(.invalidProperty("the \(what) is longer than 65535 bytes")) }
    }

    func free() {
        var list = list
        if list != nil { mosquitto_property_free_all(&list) }
    }

    /// Copies the properties HomeGate uses out of a received message's list.
    static func read(_ list: OpaquePointer?) -> Message.Properties {
        var properties = Message.Properties()
        guard let list else { return properties }
        properties.responseTopic = readString(list, MQTT_PROP_RESPONSE_TOPIC).flatMap { try? TopicName($0) }
        properties.contentType = readString(list, MQTT_PROP_CONTENT_TYPE)
        var length: UInt16 = 0
        var bytes: UnsafeMutableRawPointer?
        if mosquitto_property_read_binary(list, id(MQTT_PROP_CORRELATION_DATA), &bytes, &length, false) != nil {
            properties.correlationData = bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
            Foundation.free(bytes)
        }
        var expiry: UInt32 = 0
        if mosquitto_property_read_int32(list, id(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL), &expiry, false) != nil {
            properties.messageExpiryInterval = expiry
        }
        var format: UInt8 = 0
        if mosquitto_property_read_byte(list, id(MQTT_PROP_PAYLOAD_FORMAT_INDICATOR), &format, false) != nil {
            properties.payloadIsUTF8 = format == 1
        }
        properties.userProperties = readUserProperties(list)
        return properties
    }

    private static func readString(_ list: OpaquePointer, _ identifier: mqtt5_property) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard mosquitto_property_read_string(list, id(identifier), &value, false) != nil, let value else { return nil }
        defer { Foundation.free(value) }
        return String(cString: value)
    }

    private static func readUserProperties(_ list: OpaquePointer) -> [Message.UserProperty] {
        var result: [Message.UserProperty] = []
        var name: UnsafeMutablePointer<CChar>?
        var value: UnsafeMutablePointer<CChar>?
        var cursor = mosquitto_property_read_string_pair(list, id(MQTT_PROP_USER_PROPERTY), &name, &value, false)
        while cursor != nil {
            if let name, let value { result.append(Message.UserProperty(String(cString: name), String(cString: value))) }
            Foundation.free(name)
            Foundation.free(value)
            name = nil
            value = nil
            cursor = mosquitto_property_read_string_pair(cursor, id(MQTT_PROP_USER_PROPERTY), &name, &value, true)
        }
        return result
    }

    private static func id(_ identifier: mqtt5_property) -> Int32 {
        Int32(identifier.rawValue)
    }
}
