import Wire

extension JSON {
    /// Parses an accessory's `application/hap+json` body.
    /// - Throws: ``HAPError`` (malformed) saying what `context` was and what is wrong with it.
    static func hapBody(_ bytes: [UInt8], _ context: String) throws(HAPError) -> JSON {
        do {
            return try JSON.parse(bytes)
        } catch {
            throw HAPError(.malformed, "\(context): the accessory sent JSON that does not parse: \(error)")
        }
    }
}
