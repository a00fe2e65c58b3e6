import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension Endpoints {
    /// The largest backup file a restore takes.
    static let backupLimit = 256 * 1024 * 1024

    /// `GET /api/backup`: a backup file of the running gateway, for an admin, with the session's
    /// CSRF token in `X-CSRF-Token` (the page fetches it; a link from another site cannot), never
    /// cached. The file holds the pairing keys: its bytes never reach the log.
    func downloadBackup(_ request: Request) async -> Response {
        guard let (_, session) = await currentSession(request) else {
            return Self.json(.unauthorized, ["error": "login-required", "message": "sign in first"])
        }
        if let refusal = adminChangeRefusal(request, session, doing: "download a backup") { return refusal }
        guard let maintenance else { return Self.json(.notFound, ["error": "not-found", "message": "this gateway offers no backups"]) }
        switch await maintenance.backup() {
        case .success(let bytes):
            logger.notice("web page: \(session.user ?? "the page") downloaded a backup (\(bytes.count) bytes)")
            return Response(status: .ok, headers: [
                .contentType: "application/octet-stream",
                .cacheControl: "no-store",
                .contentDisposition: "attachment; filename=\"\(Self.backupFileName(Date()))\"",
            ], body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        case .failure(let refusal):
            logger.error("web page: a backup failed: \(refusal.message)")
            return Self.json(.internalServerError, ["error": .string(refusal.code.rawValue), "message": .string(refusal.message)])
        }
    }

    /// `POST /api/restore` with a backup file as the body: an admin's, CSRF-checked. The whole file
    /// is checked first (a bad one gets 422 and changes nothing), staged next to the data
    /// directory, and the gateway restarts on it (202).
    func restoreBackup(_ request: Request) async -> Response {
        guard let (_, session) = await currentSession(request) else {
            return Self.json(.unauthorized, ["error": "login-required", "message": "sign in first"])
        }
        if let refusal = adminChangeRefusal(request, session, doing: "restore a backup") { return refusal }
        guard let maintenance else { return Self.json(.notFound, ["error": "not-found", "message": "this gateway offers no restore"]) }
        guard let buffer = try? await request.body.collect(upTo: Self.backupLimit) else {
            return Self.json(.contentTooLarge, ["error": "invalid-backup", "message": "the file is larger than \(Self.backupLimit / 1024 / 1024) MiB: not a HomeGate backup"])
        }
        switch await maintenance.restore(Array(buffer.readableBytesView)) {
        case .success(let summary):
            logger.notice("web page: \(session.user ?? "the page") restored a backup: \(summary); the gateway restarts")
            return Self.json(.accepted, ["ok": true, "message": .string(summary)])
        case .failure(let refusal):
            logger.notice("web page: a restore by \(session.user ?? "the page") was refused: \(refusal.message)")
            let status: HTTPResponse.Status = switch refusal.code {
            case .invalidBackup: .unprocessableContent
            case .busy: .conflict
            case .unavailable: .internalServerError
            }
            return Self.json(status, ["error": .string(refusal.code.rawValue), "message": .string(refusal.message)])
        }
    }

    /// A change only an admin makes: the CSRF token and Origin first, then the role.
    private func adminChangeRefusal(_ request: Request, _ session: Sessions.Session, doing what: String) -> Response? {
        if let refusal = changeRefusal(request, session) { return refusal }
        guard session.role == .admin else { return Self.forbidden("only an admin may \(what)") }
        return nil
    }

    /// `homegate-20261126-174000.backup` (UTC).
    static func backupFileName(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return "homegate-\(formatter.string(from: date)).backup"
    }
}
