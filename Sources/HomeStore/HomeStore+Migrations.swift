import GRDB

// The schema, as a list of named migrations. A migration, once released, is never edited:
// a change to the schema is a new migration appended at the end. The database is never erased
// to get a new schema.

extension HomeStore {
    /// The schema's migrations, in order: `v1-layout`, `v2-ledger`, `v3-pairings`,
    /// `v4-trigger-last-fire`, `v5-history`, `v6-pairing-transport`.
    static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-layout") { db in
            for statement in Schema.layout { try db.execute(sql: statement) }
        }
        migrator.registerMigration("v2-ledger") { db in
            for statement in Schema.ledger { try db.execute(sql: statement) }
        }
        migrator.registerMigration("v3-pairings") { db in
            for statement in Schema.pairings { try db.execute(sql: statement) }
        }
        migrator.registerMigration("v4-trigger-last-fire") { db in
            for statement in Schema.triggerLastFire { try db.execute(sql: statement) }
        }
        migrator.registerMigration("v5-history") { db in
            for statement in Schema.history { try db.execute(sql: statement) }
        }
        migrator.registerMigration("v6-pairing-transport") { db in
            for statement in Schema.pairingTransport { try db.execute(sql: statement) }
        }
        return migrator
    }
}

/// Keys of the `setting` table.
enum SettingKey {
    /// The configuration last applied, as the gateway wrote it.
    static let lastAppliedConfiguration = "last-applied-configuration"
    static let lastAppliedDigest = "last-applied-configuration-digest"
    /// Present (with an empty value) once a layout was saved, even a layout of no homes.
    static let layoutSaved = "layout-saved"
    /// The options `$request/accessory/options` set, per accessory id (one JSON object).
    static let accessoryOptions = "accessory-options"
    /// The lightbulb services Adaptive Lighting is on for (a JSON list of accessory and service iid).
    static let adaptiveLighting = "adaptive-lighting"
}

/// The SQL of each migration.
///
/// Every table of the layout belongs to a home and goes with it (`ON DELETE CASCADE`); lists keep
/// their order in `position`. References across the layout (an accessory's room and bridge, a
/// zone's rooms) are stored as given, without foreign keys: the store keeps the layout it was
/// handed, whole, and checking it is the model's business. The default room is never stored;
/// an accessory in it has a NULL `room_id`.
private enum Schema {
    /// `v1-layout`: the homes and everything in them.
    static let layout = [
        """
        CREATE TABLE home (
            id TEXT NOT NULL PRIMARY KEY,
            name TEXT NOT NULL,
            is_primary BOOLEAN NOT NULL,
            position INTEGER NOT NULL
        )
        """,
        """
        CREATE TABLE room (
            home_id TEXT NOT NULL REFERENCES home(id) ON DELETE CASCADE,
            id TEXT NOT NULL,
            name TEXT NOT NULL,
            position INTEGER NOT NULL,
            PRIMARY KEY (home_id, id)
        )
        """,
        """
        CREATE TABLE zone (
            home_id TEXT NOT NULL REFERENCES home(id) ON DELETE CASCADE,
            id TEXT NOT NULL,
            name TEXT NOT NULL,
            position INTEGER NOT NULL,
            PRIMARY KEY (home_id, id)
        )
        """,
        """
        CREATE TABLE zone_room (
            home_id TEXT NOT NULL,
            zone_id TEXT NOT NULL,
            room_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            PRIMARY KEY (home_id, zone_id, position),
            FOREIGN KEY (home_id, zone_id) REFERENCES zone(home_id, id) ON DELETE CASCADE
        )
        """,
        "CREATE INDEX zone_room_by_room ON zone_room(home_id, room_id)",
        """
        CREATE TABLE accessory (
            home_id TEXT NOT NULL REFERENCES home(id) ON DELETE CASCADE,
            id TEXT NOT NULL,
            name TEXT NOT NULL,
            manufacturer TEXT NOT NULL,
            model TEXT NOT NULL,
            serial_number TEXT NOT NULL,
            firmware_revision TEXT NOT NULL,
            category INTEGER NOT NULL,
            room_id TEXT,
            is_reachable BOOLEAN NOT NULL,
            bridge_id TEXT,
            position INTEGER NOT NULL,
            services TEXT NOT NULL,
            PRIMARY KEY (home_id, id)
        )
        """,
        "CREATE INDEX accessory_by_room ON accessory(home_id, room_id)",
        "CREATE INDEX accessory_by_bridge ON accessory(home_id, bridge_id)",
        """
        CREATE TABLE service_group (
            home_id TEXT NOT NULL REFERENCES home(id) ON DELETE CASCADE,
            id TEXT NOT NULL,
            name TEXT NOT NULL,
            position INTEGER NOT NULL,
            services TEXT NOT NULL,
            PRIMARY KEY (home_id, id)
        )
        """,
        """
        CREATE TABLE action_set (
            home_id TEXT NOT NULL REFERENCES home(id) ON DELETE CASCADE,
            id TEXT NOT NULL,
            name TEXT NOT NULL,
            position INTEGER NOT NULL,
            actions TEXT NOT NULL,
            PRIMARY KEY (home_id, id)
        )
        """,
        """
        CREATE TABLE timer_trigger (
            home_id TEXT NOT NULL REFERENCES home(id) ON DELETE CASCADE,
            id TEXT NOT NULL,
            name TEXT NOT NULL,
            fire_date REAL NOT NULL,
            recurrence TEXT,
            action_set_ids TEXT NOT NULL,
            is_enabled BOOLEAN NOT NULL,
            position INTEGER NOT NULL,
            PRIMARY KEY (home_id, id)
        )
        """,
    ]

    /// `v2-ledger`: the retained-topic ledger and the settings. A database that already holds
    /// homes is marked as having a saved layout.
    static let ledger = [
        "CREATE TABLE retained_topic (topic TEXT NOT NULL PRIMARY KEY) WITHOUT ROWID",
        "CREATE TABLE setting (key TEXT NOT NULL PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID",
        """
        INSERT INTO setting (key, value)
        SELECT '\(SettingKey.layoutSaved)', X'' WHERE EXISTS (SELECT 1 FROM home)
        """,
    ]

    /// `v3-pairings`: the HAP controller's identity (one row) and the accessories paired with it.
    /// The private key is a secret: the database file is mode 0600 and the key is never logged.
    static let pairings = [
        """
        CREATE TABLE controller_identity (
            singleton INTEGER NOT NULL PRIMARY KEY CHECK (singleton = 1),
            pairing_id TEXT NOT NULL,
            private_key BLOB NOT NULL
        )
        """,
        """
        CREATE TABLE pairing (
            device_id TEXT NOT NULL PRIMARY KEY,
            public_key BLOB NOT NULL,
            host TEXT NOT NULL,
            port INTEGER NOT NULL,
            name TEXT NOT NULL,
            home TEXT,
            room TEXT,
            paired_at DOUBLE NOT NULL
        )
        """,
    ]

    /// `v4-trigger-last-fire`: each timer trigger's last fire date (seconds since 1970; NULL:
    /// it never fired), so a trigger neither fires twice nor misses a fire across a restart.
    static let triggerLastFire = [
        "ALTER TABLE timer_trigger ADD COLUMN last_fire_date REAL",
    ]

    /// `v5-history`: each characteristic's values over time (`HomeStore+History.swift`). A series
    /// is one characteristic, by its accessory's stable id and its instance id (never its topic,
    /// which a rename moves), with the number of points it holds; a point is a time (Unix
    /// milliseconds) and the value's JSON text as it was published.
    static let history = [
        """
        CREATE TABLE history_series (
            id INTEGER PRIMARY KEY,
            accessory_id TEXT NOT NULL,
            iid INTEGER NOT NULL,
            point_count INTEGER NOT NULL DEFAULT 0,
            UNIQUE (accessory_id, iid)
        )
        """,
        """
        CREATE TABLE history_point (
            series_id INTEGER NOT NULL REFERENCES history_series(id) ON DELETE CASCADE,
            time INTEGER NOT NULL,
            value TEXT NOT NULL
        )
        """,
        "CREATE INDEX history_point_by_time ON history_point(series_id, time)",
    ]

    /// `v6-pairing-transport`: how a paired device is reached: `ip` (HAP over IP, every pairing
    /// made before) or `coap` (HAP over CoAP, Thread accessories).
    static let pairingTransport = [
        "ALTER TABLE pairing ADD COLUMN transport TEXT NOT NULL DEFAULT 'ip'",
    ]
}
