import Matter
import Wire

/// Matter's Interaction Model status codes (Matter Core spec 8.10), in words, and the HAP status
/// each is acknowledged with: a refused set carries both.
enum MatterStatus {
    static let names: [Int: String] = [
        0x00: "SUCCESS", 0x01: "FAILURE", 0x7D: "INVALID_SUBSCRIPTION", 0x7E: "UNSUPPORTED_ACCESS", 0x7F: "UNSUPPORTED_ENDPOINT",
        0x80: "INVALID_ACTION", 0x81: "UNSUPPORTED_COMMAND", 0x85: "INVALID_COMMAND", 0x86: "UNSUPPORTED_ATTRIBUTE", 0x87: "CONSTRAINT_ERROR",
        0x88: "UNSUPPORTED_WRITE", 0x89: "RESOURCE_EXHAUSTED", 0x8B: "NOT_FOUND", 0x8C: "UNREPORTABLE_ATTRIBUTE", 0x8D: "INVALID_DATA_TYPE",
        0x8F: "UNSUPPORTED_READ", 0x92: "DATA_VERSION_MISMATCH", 0x94: "TIMEOUT", 0x9C: "BUSY", 0xC3: "UNSUPPORTED_CLUSTER",
        0xC5: "NO_UPSTREAM_SUBSCRIPTION", 0xC6: "NEEDS_TIMED_INTERACTION", 0xC7: "UNSUPPORTED_EVENT", 0xC8: "PATHS_EXHAUSTED",
        0xC9: "TIMED_REQUEST_MISMATCH", 0xCA: "FAILSAFE_REQUIRED", 0xCB: "INVALID_IN_STATE", 0xCC: "NO_COMMAND_RESPONSE",
    ]

    /// The HAP status a Matter status is acknowledged with.
    static func hapStatus(_ status: Int) -> HAPStatus {
        switch status {
        case 0x7E: .insufficientPrivileges
        case 0x87, 0x85, 0x8D: .invalidValue
        case 0x88: .readOnly
        case 0x8F: .writeOnly
        case 0x89, 0xC8: .outOfResources
        case 0x94: .timedOut
        case 0x9C: .busy
        case 0x7F, 0x81, 0x86, 0x8B, 0xC3, 0xC7: .noSuchResource
        case 0xC6, 0xC9, 0xCA: .insufficientAuthorization
        default: .notAllowedInCurrentState
        }
    }

    static func statusError(_ status: Int, doing what: String) -> StatusError {
        let name = names[status] ?? "status"
        return StatusError(hapStatus(status), "the Matter device refused \(what): \(name) (0x\(String(status, radix: 16, uppercase: true)))")
    }

    /// The status a server error's details name: `... Status: 0x87`, `(0x87)`, or a status name.
    static func code(in details: String) -> Int? {
        var rest = Substring(details.lowercased())
        while let range = rest.range(of: "0x") {
            let digits = rest[range.upperBound...].prefix { $0.isHexDigit }
            if let code = Int(digits, radix: 16), names[code] != nil, code != 0 { return code }
            rest = rest[range.upperBound...]
        }
        let upper = details.uppercased()
        for (code, name) in names where code != 0 && upper.contains(name) {
            return code
        }
        return nil
    }

    /// The status in a `write_attribute` result: a list of `{"Path": ..., "Status": n}`.
    static func writeStatus(in result: JSON) -> Int? {
        guard let entries = result.array else { return nil }
        for entry in entries {
            if let status = (entry["Status"] ?? entry["status"])?.int, status != 0 { return Int(status) }
        }
        return entries.isEmpty ? nil : 0
    }
}
