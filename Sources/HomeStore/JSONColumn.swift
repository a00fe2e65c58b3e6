import Foundation
import HomeModel
import Wire

/// Turns the model's lists into the JSON text of a column and back, through ``ModelJSON``.
///
/// Keys are sorted, so the same value always gives the same text.
struct JSONColumn {
    func encode(_ services: [Service]) -> String { text(.array(services.map(\.modelJSON))) }
    func encode(_ services: [ServiceReference]) -> String { text(.array(services.map(\.modelJSON))) }
    func encode(_ actions: [ActionSet.Action]) -> String { text(.array(actions.map(\.modelJSON))) }
    func encode(_ recurrence: TimerTrigger.Recurrence) -> String { text(recurrence.modelJSON) }
    func encode(_ ids: [ActionSetID]) -> String { text(.array(ids.map { .string($0.rawValue) })) }

    private func text(_ json: JSON) -> String {
        String(decoding: json.encoded(), as: UTF8.self)
    }

    /// Decodes `text`, the `column` of `record`, with `read`; an error says which row and column it was.
    func decode<T>(_ text: String, column: String, of record: some HomeChildRecord, _ read: (JSON) throws(ModelJSON.Failure) -> T) throws -> T {
        do {
            return try read(try ModelJSON.parse(Array(text.utf8), column))
        } catch {
            throw InvalidColumn(record, column: column, reason: error.description)
        }
    }

    /// A list column.
    func decodeList<T>(_ text: String, column: String, of record: some HomeChildRecord, _ read: @escaping (JSON) throws(ModelJSON.Failure) -> T) throws -> [T] {
        try decode(text, column: column, of: record) { json throws(ModelJSON.Failure) in try ModelJSON.list(json, column, read) }
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
