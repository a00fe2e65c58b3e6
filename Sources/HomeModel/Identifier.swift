/// A stable identifier of a `Kind` of object: a string that never changes for the object's life,
/// whatever it is renamed to or moved into.
public struct Identifier<Kind>: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    public var description: String { rawValue }

    public static func < (lhs: Identifier, rhs: Identifier) -> Bool { lhs.rawValue < rhs.rawValue }
}

public typealias HomeID = Identifier<Home>
public typealias RoomID = Identifier<Room>
public typealias ZoneID = Identifier<Zone>
public typealias AccessoryID = Identifier<Accessory>
public typealias ServiceGroupID = Identifier<ServiceGroup>
public typealias ActionSetID = Identifier<ActionSet>
public typealias TriggerID = Identifier<TimerTrigger>
