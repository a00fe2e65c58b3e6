import Foundation
import Timing

/// Everything a ``Client`` needs to know to reach and talk to a broker.
///
/// Values are checked by ``Client/init(configuration:logger:)``: a bad combination (TLS files on
/// an `mqtt://` URL, a certificate without its key, a keep-alive out of range) is refused there
/// with a ``ConfigurationError`` that says what is wrong.
public struct Configuration: Sendable {
    /// Where the broker is: the first one tried.
    public var url: BrokerURL
    /// Other brokers (the other nodes of a cluster), tried in order when the ones before them
    /// cannot be reached; after a lost connection the list is tried again from ``url``. They share
    /// the credentials and TLS settings, so they use ``url``'s scheme and user name.
    public var fallbackURLs: [BrokerURL] = []
    /// The MQTT client identifier. Brokers disconnect an older client that uses the same one.
    public var clientID: String
    /// The user name; when nil, the one in the URL, if any.
    public var username: String?
    /// The password, read from a file or an environment variable (see ``Secret``).
    public var password: Secret?
    /// TLS settings, used with `mqtts://` URLs.
    public var tls: TLS
    /// The keep-alive interval: 0 (off) or 5 to 65,535 seconds.
    public var keepAlive: Duration
    /// Start a new session at every connect (the default). With `false`, MQTT 5 asks the broker
    /// to keep the session for ``sessionExpiry`` after a disconnect.
    public var cleanStart: Bool
    /// How long the broker keeps a session after a disconnect when ``cleanStart`` is false (MQTT 5).
    public var sessionExpiry: Duration
    /// MQTT 5 (default) or 3.1.1.
    public var protocolVersion: ProtocolVersion
    /// The Last Will: published by the broker if this client goes away without a clean disconnect.
    public var will: Message?
    /// The reconnect policy.
    public var backoff: Backoff
    /// How many received messages may wait for the consumer of ``Client/messages`` before the
    /// client stops reading from the broker (it reads again at half of it). Nothing is dropped:
    /// the broker keeps the rest. See ``Client/Messages``.
    public var incomingBufferLimit: Int

    public init(
        url: BrokerURL,
        clientID: String,
        username: String? = nil,
        password: Secret? = nil,
        tls: TLS = TLS(),
        keepAlive: Duration = .seconds(30),
        cleanStart: Bool = true,
        sessionExpiry: Duration = .seconds(3600),
        protocolVersion: ProtocolVersion = .v5,
        will: Message? = nil,
        backoff: Backoff? = nil,
        incomingBufferLimit: Int = 65_536
    ) {
        self.url = url
        self.clientID = clientID
        self.username = username
        self.password = password
        self.tls = tls
        self.keepAlive = keepAlive
        self.cleanStart = cleanStart
        self.sessionExpiry = sessionExpiry
        self.protocolVersion = protocolVersion
        self.will = will
        self.backoff = backoff ?? .standard
        self.incomingBufferLimit = incomingBufferLimit
    }

    /// Every broker, in the order they are tried.
    public var urls: [BrokerURL] { [url] + fallbackURLs }

    /// The user name actually sent: ``username``, else the URL's.
    public var effectiveUsername: String? { username ?? url.username }

    /// TLS settings: a CA file to trust (else the system's CAs) and an optional client certificate.
    public struct TLS: Sendable, Equatable {
        /// PEM file with the certificate authorities to trust; nil trusts the system's.
        public var caFile: String?
        /// PEM client certificate, for brokers that require one.
        public var certificateFile: String?
        /// PEM private key of the client certificate (unencrypted).
        public var privateKeyFile: String?

        public init(caFile: String? = nil, certificateFile: String? = nil, privateKeyFile: String? = nil) {
            self.caFile = caFile
            self.certificateFile = certificateFile
            self.privateKeyFile = privateKeyFile
        }

        /// Whether any TLS setting is given.
        public var isEmpty: Bool { self == TLS() }
    }

    /// Checks the combination of settings.
    public func validate() throws(ConfigurationError) {
        if clientID.isEmpty { throw ConfigurationError("the client id must not be empty") }
        try Self.checkText(clientID, "the client id")
        if let username = effectiveUsername { try Self.checkText(username, "the user name") }
        if let password, password.value.utf8.contains(0) { throw ConfigurationError("the password contains a NUL character") }
        let seconds = keepAlive.wholeSeconds
        if seconds != 0 && !(5...65_535).contains(seconds) {
            throw ConfigurationError("keep-alive must be 0 (off) or 5 to 65535 seconds, got \(seconds)")
        }
        for other in fallbackURLs {
            guard other.usesTLS == url.usesTLS else {
                throw ConfigurationError("every broker in the list must use the same scheme: \(url) and \(other) differ")
            }
            guard other.username == url.username else {
                throw ConfigurationError("every broker in the list must have the same user name: \(url) and \(other) differ")
            }
        }
        if !tls.isEmpty && !url.usesTLS {
            throw ConfigurationError("TLS files are set but the broker URL \(url) is not mqtts://")
        }
        if (tls.certificateFile == nil) != (tls.privateKeyFile == nil) {
            throw ConfigurationError("a client certificate needs both a certificate file and a private key file")
        }
        if password != nil && effectiveUsername == nil {
            throw ConfigurationError("a password is set but no user name")
        }
        if incomingBufferLimit < 1 {
            throw ConfigurationError("the incoming buffer limit must be at least 1, got \(incomingBufferLimit)")
        }
        for file in [tls.caFile, tls.certificateFile, tls.privateKeyFile].compactMap({ $0 }) {
            guard let handle = fopen(file, "r") else {
                throw ConfigurationError("cannot read TLS file \(file): \(String(cString: strerror(errno)))")
            }
            fclose(handle)
        }
    }
}

extension Configuration {
    /// MQTT strings: at most 65,535 bytes, and no NUL, control characters or Unicode
    /// non-characters (libmosquitto and Mosquitto refuse them).
    static func checkText(_ text: String, _ what: String) throws(ConfigurationError) {
        if text.utf8.count > 65_535 { throw ConfigurationError("\(what) is longer than 65535 bytes") }
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value <= 0x1F || (0x7F...0x9F).contains(value) || (0xFDD0...0xFDEF).contains(value) || value & 0xFFFE == 0xFFFE {
                throw ConfigurationError("\(what) contains the character \(Topic.codePoint(scalar)), which MQTT brokers refuse")
            }
        }
    }
}

/// A setting that cannot work, and why.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
