import Foundation
import Testing
@testable import HomeStore

@Suite("The data directory's lock, and a restore's exchange")
struct DataDirectoryLockTests {
    /// Takes the lock of `directory` once it is let go: a child another test spawns holds a copy
    /// of every descriptor until it execs (the lock's is close-on-exec), so a lock may outlive
    /// its close by a moment.
    static func acquireOnceLetGo(_ directory: String) async throws -> DataDirectoryLock {
        let deadline = ContinuousClock.now + .seconds(60) // a hang guard, as the harness's (HangGuard)
        while true {
            do {
                return try DataDirectoryLock.acquire(directory)
            } catch {
                guard error.isHeld, ContinuousClock.now < deadline else { throw error }
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    @Test("a held lock refuses a second taker naming the holder's process id; let go, it can be taken again")
    func heldAndLetGo() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("HomeStoreTests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            var first: DataDirectoryLock? = try DataDirectoryLock.acquire(directory)
            #expect(try String(contentsOfFile: directory + "/homegate.lock", encoding: .utf8) == "\(getpid())\n")
            #expect((try FileManager.default.attributesOfItem(atPath: directory + "/homegate.lock")[.posixPermissions] as? Int) == 0o600)
            do throws(DataDirectoryLock.Failure) {
                _ = try DataDirectoryLock.acquire(directory)
                Issue.record("a second lock was granted while the first was held")
            } catch {
                #expect(error.isHeld)
                #expect(error.holder == getpid())
                #expect(error.description == "\(directory) is in use by a running gateway (process \(getpid()) holds homegate.lock); stop it first")
            }
            withExtendedLifetime(first) {}
            first = nil
            let again = try await Self.acquireOnceLetGo(directory)
            withExtendedLifetime(again) {}
        }
    }

    @Test("a directory that cannot hold the lock file: a failure that says why, not a holder")
    func unusable() {
        do throws(DataDirectoryLock.Failure) {
            _ = try DataDirectoryLock.acquire("/nonexistent-homegate-\(getpid())")
            Issue.record("a lock in a missing directory was granted")
        } catch {
            #expect(!error.isHeld)
            #expect(error.description.contains("cannot open it: No such file or directory"), "\(error)")
        }
    }

    @Test("a directory holding only its lock file counts as empty for a restore")
    func lockFileAloneIsEmpty() throws {
        try withTemporaryDirectory { directory in
            #expect(!Backup.isNonEmptyDirectory(directory))
            let lock = try DataDirectoryLock.acquire(directory)
            #expect(!Backup.isNonEmptyDirectory(directory))
            _ = FileManager.default.createFile(atPath: directory + "/other", contents: Data())
            #expect(Backup.isNonEmptyDirectory(directory))
            withExtendedLifetime(lock) {}
        }
    }

    @Test("putInPlace exchanges an existing directory with the staged one in one step and removes the old one")
    func exchange() throws {
        try withTemporaryDirectory { parent in
            let target = parent + "/data", staging = parent + "/.data.restore"
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
            try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
            _ = FileManager.default.createFile(atPath: target + "/old", contents: Data("old".utf8))
            _ = FileManager.default.createFile(atPath: staging + "/new", contents: Data("new".utf8))
            let inode = try FileManager.default.attributesOfItem(atPath: staging)[.systemFileNumber] as? Int
            try Backup.putInPlace(staging: staging, directory: target)
            #expect(try FileManager.default.contentsOfDirectory(atPath: target) == ["new"])
            #expect(try FileManager.default.attributesOfItem(atPath: target)[.systemFileNumber] as? Int == inode, "the staged folder itself is now the directory")
            #expect(try FileManager.default.contentsOfDirectory(atPath: parent) == ["data"], "the old directory is gone")
        }
    }
}
