import Crypto
import Foundation
import HomeGateConfig

/// The page's sign-ins: a random token in an HttpOnly cookie names a session, which carries the
/// person, the role and the token a change must repeat in its `X-CSRF-Token` header. Kept in
/// memory only: a restart of the gateway signs everyone out.
actor Sessions {
    /// One signed-in browser.
    struct Session: Sendable {
        /// The account; nil when the page needs no sign-in.
        var user: String?
        var role: UsersFile.Role
        /// What a change must carry in `X-CSRF-Token`.
        var csrf: String
        var lastUsed: ContinuousClock.Instant
    }

    /// The most sessions kept; the least recently used goes first beyond it.
    static let limit = 1000

    private let timeout: Duration
    private let clock = ContinuousClock()
    private var sessions: [String: Session] = [:]

    init(timeout: Duration) {
        self.timeout = timeout
    }

    /// Starts a session; returns its token (for the cookie) and the session.
    func start(user: String?, role: UsersFile.Role) -> (token: String, session: Session) {
        expire()
        if sessions.count >= Self.limit, let oldest = sessions.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key {
            sessions.removeValue(forKey: oldest)
        }
        let session = Session(user: user, role: role, csrf: Self.randomToken(), lastUsed: clock.now)
        let token = Self.randomToken()
        sessions[token] = session
        return (token, session)
    }

    /// The session a token names, if it is still valid; its use keeps it alive.
    func session(_ token: String) -> Session? {
        guard var session = sessions[token] else { return nil }
        guard session.lastUsed.duration(to: clock.now) < timeout else {
            sessions.removeValue(forKey: token)
            return nil
        }
        session.lastUsed = clock.now
        sessions[token] = session
        return session
    }

    /// Ends a session (sign-out).
    func end(_ token: String) {
        sessions.removeValue(forKey: token)
    }

    private func expire() {
        let now = clock.now
        sessions = sessions.filter { $0.value.lastUsed.duration(to: now) < timeout }
    }

    /// 32 random bytes, base64url without padding.
    static func randomToken() -> String {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Whether two tokens are equal, in time that does not depend on where they differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// Checks a name and password against the users file (the role) and the Mosquitto password file,
/// both read again at each attempt, so `homegate passwd` and a changed users file apply at once.
/// After ``failureLimit`` wrong passwords for one name within ``failureWindow``, that name is
/// refused for ``lockout`` without checking.
actor SignIn {
    enum Outcome: Equatable {
        case accepted(UsersFile.Role)
        case refused
        case lockedOut
        /// A file could not be read; the message names it (for the log, not the browser).
        case unavailable(String)
    }

    static let failureLimit = 5
    static let failureWindow = Duration.seconds(300)
    static let lockout = Duration.seconds(30)

    private let usersFile: String
    private let passwordFile: String
    private let clock = ContinuousClock()
    private var failures: [String: [ContinuousClock.Instant]] = [:]

    init(usersFile: String, passwordFile: String) {
        self.usersFile = usersFile
        self.passwordFile = passwordFile
    }

    func check(user: String, password: String) -> Outcome {
        let now = clock.now
        let recent = (failures[user] ?? []).filter { $0.duration(to: now) < Self.failureWindow }
        failures[user] = recent.isEmpty ? nil : recent
        if recent.count >= Self.failureLimit, let last = recent.last, last.duration(to: now) < Self.lockout {
            return .lockedOut
        }
        let users: UsersFile
        let passwords: PasswordFile
        do {
            users = try UsersFile.load(path: usersFile)
            passwords = try PasswordFile.load(path: passwordFile)
        } catch {
            return .unavailable(error.description)
        }
        let role = users.users.first { $0.name == user }?.role
        // The password is checked even for a name the users file lacks: the same time either way.
        if passwords.verify(user: user, password: password), let role {
            failures[user] = nil
            return .accepted(role)
        }
        if failures.count > 10_000 { failures.removeAll() }
        failures[user, default: []].append(now)
        return .refused
    }
}
