import Foundation
import Gateway
import Glibc

/// The standard process metrics, read from `/proc/self` at each scrape and written in
/// Prometheus's text format (the names and meanings of Prometheus's own clients):
///
/// - `process_cpu_seconds_total`: user and system CPU time (`stat`'s utime + stime);
/// - `process_resident_memory_bytes`, `process_virtual_memory_bytes` (`stat`'s rss, vsize);
/// - `process_start_time_seconds`: the start, in seconds since the Unix epoch (`stat`'s
///   starttime after `/proc/stat`'s btime);
/// - `process_open_fds` (the entries of `fd/`), `process_max_fds` (`limits`' soft "Max open files");
/// - `process_threads`: the process's threads (`stat`'s num_threads).
///
/// Written by hand rather than kept in the registry: the figures are the kernel's at the moment
/// of the scrape (a registry counter can only be moved by differences, and the CPU time would
/// then carry the sums' rounding). A figure that cannot be read is left out, never guessed.
enum ProcessMetrics {
    /// The figures from `/proc/self`; nil for one that cannot be read.
    struct Figures: Equatable {
        var cpuSeconds: Double?
        var residentBytes: Int?
        var virtualBytes: Int?
        var startTime: Double?
        var openFileDescriptors: Int?
        var maxFileDescriptors: Int?
        var threads: Int?
    }

    /// The process metrics in the text exposition format, HELP and TYPE lines included.
    static func exposition() -> [UInt8] {
        Array(text(for: read()).utf8)
    }

    /// The families for `figures`, in a fixed order; those without a figure are left out.
    static func text(for figures: Figures) -> String {
        let families: [(name: String, type: String, help: String, value: String?)] = [
            ("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", figures.cpuSeconds.map(format)),
            ("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", figures.residentBytes.map(String.init)),
            ("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", figures.virtualBytes.map(String.init)),
            ("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", figures.startTime.map(format)),
            ("process_open_fds", "gauge", "Number of open file descriptors.", figures.openFileDescriptors.map(String.init)),
            ("process_max_fds", "gauge", "Maximum number of open file descriptors.", figures.maxFileDescriptors.map(String.init)),
            ("process_threads", "gauge", "Number of OS threads in the process.", figures.threads.map(String.init)),
        ]
        var text = ""
        for family in families {
            guard let value = family.value else { continue }
            text += "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(family.type)\n\(family.name) \(value)\n"
        }
        return text
    }

    /// The figures `$health` reports, read as a scrape reads them.
    static func healthFigures() -> ProcessFigures {
        let figures = read()
        return ProcessFigures(uptimeSeconds: figures.startTime.map { max(0, Date().timeIntervalSince1970 - $0) },
                              residentBytes: figures.residentBytes, cpuSeconds: figures.cpuSeconds)
    }

    /// Reads the figures of this process now.
    static func read() -> Figures {
        var figures = Figures()
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        if let stat = contents("/proc/self/stat").flatMap(statFields), ticksPerSecond > 0 {
            let pageSize = sysconf(Int32(_SC_PAGESIZE))
            if let user = stat.number(14), let system = stat.number(15) { figures.cpuSeconds = Double(user + system) / ticksPerSecond }
            figures.residentBytes = stat.number(24).map { $0 * pageSize }
            figures.virtualBytes = stat.number(23)
            figures.threads = stat.number(20)
            if let started = stat.number(22), let boot = bootTime() { figures.startTime = Double(boot) + Double(started) / ticksPerSecond }
        }
        figures.openFileDescriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        figures.maxFileDescriptors = contents("/proc/self/limits").flatMap(openFilesLimit)
        return figures
    }

    /// `/proc/self/stat`'s fields, numbered as in proc(5): the command (field 2) is in
    /// parentheses and may hold spaces and parentheses itself, so fields 3 on are counted from
    /// the last `)`.
    struct StatFields {
        let afterCommand: [Substring]

        /// Field `index` (3 or more) as a whole number.
        func number(_ index: Int) -> Int? {
            let position = index - 3
            guard afterCommand.indices.contains(position) else { return nil }
            return Int(afterCommand[position])
        }
    }

    static func statFields(_ text: String) -> StatFields? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        return StatFields(afterCommand: text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true))
    }

    /// The soft limit of "Max open files" in `/proc/self/limits`; nil if it says "unlimited".
    static func openFilesLimit(_ limits: String) -> Int? {
        for line in limits.split(separator: "\n") where line.hasPrefix("Max open files") {
            let columns = line.dropFirst("Max open files".count).split(separator: " ", omittingEmptySubsequences: true)
            return columns.first.flatMap { Int($0) }
        }
        return nil
    }

    /// The system's boot time, in seconds since the epoch (`/proc/stat`'s btime).
    private static func bootTime() -> Int? {
        guard let stat = contents("/proc/stat") else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Int(line.dropFirst("btime ".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    private static func contents(_ path: String) -> String? {
        try? String(contentsOfFile: path, encoding: .utf8)
    }

    /// A number as Prometheus reads it: `0.37`, `1795701234.56`.
    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
