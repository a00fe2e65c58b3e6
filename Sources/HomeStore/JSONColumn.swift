import Foundation

/// Turns the model's lists into the JSON text of a column and back.
///
/// Keys are sorted, so the same value always gives the same text.
struct JSONColumn {
    private let encoder: JSONEncoder
    private let decoder = JSONDecoder()

    init() {
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    func encode(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Decodes `text`, the `column` of `record`; an error says which row and column it was.
    func decode<T: Decodable>(_ type: T.Type, from text: String, column: String, of record: some HomeChildRecord) throws -> T {
        do {
            return try decoder.decode(type, from: Data(text.utf8))
        } catch {
            throw InvalidColumn(record, column: column, reason: "\(error)")
        }
    }
}

/// A row of a table whose rows belong to a home.
protocol HomeChildRecord {
    static var databaseTableName: String { get }
    var homeID: String { get }
    var id: String { get }
}

/// A stored value that does not fit the model.
struct InvalidColumn: Error, CustomStringConvertible {
    let description: String

    init(_ record: some HomeChildRecord, column: String, reason: String) {
        let table = type(of: record).databaseTableName
        description = "\(table) \"\(record.id)\" of home \"\(record.homeID)\", column \(column): \(reason)"
    }
}
