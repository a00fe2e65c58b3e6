import HomeModel
import Wire

extension JSON {
    /// A characteristic's value as JSON, or null.
    static func value(_ value: HomeModel.Value?) -> JSON {
        value?.json ?? .null
    }
}
