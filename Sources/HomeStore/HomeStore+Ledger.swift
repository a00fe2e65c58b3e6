import GRDB

// The ledger of retained topics: every topic the gateway has published a retained message on
// and not yet cleared. On start, a topic in the ledger that the current layout no longer
// publishes is stale: the gateway clears it (an empty retained message) and forgets it.

extension HomeStore {
    /// The topics recorded as holding a retained message the gateway published.
    public func retainedTopics() throws(StoreError) -> Set<String> {
        try read("read the retained-topic ledger") { db in
            try String.fetchSet(db, sql: "SELECT topic FROM retained_topic")
        }
    }

    /// Records `topics` as holding retained messages, in one transaction; recording a topic
    /// already recorded changes nothing.
    public func recordRetained(_ topics: some Collection<String>) throws(StoreError) {
        guard !topics.isEmpty else { return }
        try write("record retained topics") { db in
            let statement = try db.cachedStatement(sql: "INSERT OR IGNORE INTO retained_topic (topic) VALUES (?)")
            for topic in topics { try statement.execute(arguments: [topic]) }
        }
    }

    /// Forgets `topics` (their retained messages were cleared), in one transaction; forgetting
    /// a topic not recorded changes nothing.
    public func forgetRetained(_ topics: some Collection<String>) throws(StoreError) {
        guard !topics.isEmpty else { return }
        try write("forget retained topics") { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM retained_topic WHERE topic = ?")
            for topic in topics { try statement.execute(arguments: [topic]) }
        }
    }
}
