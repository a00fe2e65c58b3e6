import Logging

/// Where log lines go: standard error, one line each, with time, level and source.
enum LogSetup {
    /// Sends every log line to standard error at `level` and above; returns the gateway's logger.
    static func bootstrap(level: Logger.Level) -> Logger {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "homegate")
        logger.logLevel = level
        return logger
    }
}
