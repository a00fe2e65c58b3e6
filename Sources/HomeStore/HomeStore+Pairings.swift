import Foundation
import GRDB

/// An accessory server (an accessory or a bridge) paired with the gateway's HAP controller.
public struct StoredPairing: Sendable, Hashable {
    /// The accessory's pairing id (its device id, `AA:BB:CC:DD:EE:FF`).
    public var deviceID: String
    /// Its Ed25519 long-term public key.
    public var publicKey: [UInt8]
    public var host: String
    public var port: Int
    /// Its name when it was paired (the bridge's or accessory's own name).
    public var name: String
    /// The home its accessories go into when the gateway first sees them (nil: the primary home).
    public var home: String?
    /// The room the accessory (or the bridge) goes into; accessories behind a bridge start in
    /// the default room.
    public var room: String?
    public var pairedAt: Date
    /// How it is reached: `ip` (HAP over IP) or `coap` (HAP over CoAP, a Thread accessory).
    public var transport: String

    public init(deviceID: String, publicKey: [UInt8], host: String, port: Int, name: String, home: String? = nil, room: String? = nil,
                pairedAt: Date = Date(), transport: String = "ip") {
        self.deviceID = deviceID
        self.publicKey = publicKey
        self.host = host
        self.port = port
        self.name = name
        self.home = home
        self.room = room
        self.pairedAt = pairedAt
        self.transport = transport
    }
}

extension HomeStore {
    /// The HAP controller's identity: pairing id and Ed25519 private key; nil until one was saved.
    public func controllerIdentity() throws(StoreError) -> (pairingID: String, privateKey: [UInt8])? {
        try read("read the controller identity") { db in
            try Row.fetchOne(db, sql: "SELECT pairing_id, private_key FROM controller_identity WHERE singleton = 1").map { row in
                (row["pairing_id"] as String, [UInt8](row["private_key"] as Data))
            }
        }
    }

    /// Saves the controller identity, unless one exists already; returns the one stored (so two
    /// processes saving at once end up with the same identity).
    public func saveControllerIdentity(pairingID: String, privateKey: [UInt8]) throws(StoreError) -> (pairingID: String, privateKey: [UInt8]) {
        try write("save the controller identity") { db in
            try db.execute(sql: "INSERT OR IGNORE INTO controller_identity (singleton, pairing_id, private_key) VALUES (1, ?, ?)",
                           arguments: [pairingID, Data(privateKey)])
            let row = try Row.fetchOne(db, sql: "SELECT pairing_id, private_key FROM controller_identity WHERE singleton = 1")
            return row.map { ($0["pairing_id"] as String, [UInt8]($0["private_key"] as Data)) } ?? (pairingID, privateKey)
        }
    }

    /// Every pairing, in the order they were made.
    public func pairings() throws(StoreError) -> [StoredPairing] {
        try read("read the pairings") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM pairing ORDER BY paired_at, device_id").map(Self.pairing(from:))
        }
    }

    /// Adds a pairing, or replaces the one with the same device id.
    public func savePairing(_ pairing: StoredPairing) throws(StoreError) {
        try write("save the pairing with \(pairing.deviceID)") { db in
            try db.execute(sql: """
                INSERT OR REPLACE INTO pairing (device_id, public_key, host, port, name, home, room, paired_at, transport)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [pairing.deviceID, Data(pairing.publicKey), pairing.host, pairing.port, pairing.name,
                                 pairing.home, pairing.room, pairing.pairedAt.timeIntervalSince1970, pairing.transport])
        }
    }

    /// Records where a paired device is now (its address changes with DHCP).
    public func updatePairingAddress(deviceID: String, host: String, port: Int) throws(StoreError) {
        try write("update the address of \(deviceID)") { db in
            try db.execute(sql: "UPDATE pairing SET host = ?, port = ? WHERE device_id = ?", arguments: [host, port, deviceID])
        }
    }

    /// Removes a pairing; false if there was none.
    @discardableResult
    public func removePairing(deviceID: String) throws(StoreError) -> Bool {
        try write("remove the pairing with \(deviceID)") { db in
            try db.execute(sql: "DELETE FROM pairing WHERE device_id = ?", arguments: [deviceID])
            return db.changesCount > 0
        }
    }

    private static func pairing(from row: Row) -> StoredPairing {
        StoredPairing(deviceID: row["device_id"], publicKey: [UInt8](row["public_key"] as Data), host: row["host"], port: row["port"],
                      name: row["name"], home: row["home"], room: row["room"], pairedAt: Date(timeIntervalSince1970: row["paired_at"]),
                      transport: row["transport"])
    }
}
