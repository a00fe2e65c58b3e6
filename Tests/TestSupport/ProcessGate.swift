import Foundation
import Testing

/// How many tests that start processes (a broker, a gateway, device peers, Home Assistant, a
/// browser) run at once, and the load tests alone (issue 30).
///
/// Swift Testing starts every test of a run at once; with a broker, a gateway and peers each, a
/// few hundred such tests on two cores starved one another (a load average of 36, tests waiting
/// on deadlines they could not meet). A suite marked ``Trait/startsProcesses`` takes one of
/// ``capacity`` slots for each of its tests, for as long as the test runs; one marked
/// ``Trait/loadTest`` takes them all, so nothing else that starts processes runs beside it.
/// Unit tests take no slot and stay fully parallel. Slots are handed out first come, first served,
/// so a load test waiting for the others is not overtaken by tests that came after it.
///
/// The capacity is the number of cores (at least 2), or `HOMEGATE_TEST_WORLDS` when set.
public actor ProcessGate {
    /// What a test takes.
    public enum Claim: Sendable {
        /// One slot: a test with its own processes.
        case world
        /// Every slot: a test that loads the machine (floods, ids wrap, 10,000 characteristics).
        case load
    }

    /// The one gate of the test process.
    public static let shared = ProcessGate(capacity: ProcessGate.configuredCapacity())

    /// Slots in all.
    public let capacity: Int
    private var inUse = 0
    private var waiting: [(claim: Claim, continuation: CheckedContinuation<Void, Never>)] = []

    public init(capacity: Int) {
        precondition(capacity > 0, "the gate needs at least one slot")
        self.capacity = capacity
    }

    /// With `HOMEGATE_TEST_TIMINGS` set to a file, each gated test appends a line to it: the
    /// seconds it ran holding its slots, the seconds it waited for them, its claim and its name
    /// (Swift Testing's own figure for a test includes the wait). `scripts/test-repeat` reports
    /// the slowest tests from it.
    nonisolated static func record(_ test: Test, claim: Claim, waited: Duration, held: Duration) {
        guard let path = ProcessInfo.processInfo.environment["HOMEGATE_TEST_TIMINGS"] else { return }
        let name = (test.displayName ?? test.name).replacingOccurrences(of: "\n", with: " ")
        let line = String(format: "%.3f\t%.3f\t%@\t%@\n", seconds(held), seconds(waited), claim == .world ? "world" : "load", name)
        // One write with O_APPEND: lines from tests running side by side never mix, and no lock.
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard descriptor >= 0 else { return }
        _ = Array(line.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }

    private nonisolated static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// `HOMEGATE_TEST_WORLDS`, else the machine's cores, at least 2.
    static func configuredCapacity() -> Int {
        if let text = ProcessInfo.processInfo.environment["HOMEGATE_TEST_WORLDS"], let value = Int(text), value > 0 { return value }
        return max(2, ProcessInfo.processInfo.activeProcessorCount)
    }

    /// What the current task holds (a test marked twice, by its suite and by itself).
    @TaskLocal static var held: Claim?

    /// Runs `body` holding `claim`'s slots; waits for them first. Inside a scope that holds a
    /// claim already, a `.world` claim changes nothing, and a `.load` claim gives the one slot
    /// back while it waits for all of them (so two such tests cannot wait for each other).
    public nonisolated func with<T: Sendable>(_ claim: Claim, _ body: () async throws -> T) async throws -> T {
        switch (Self.held, claim) {
        case (.some, .world), (.load, .load):
            return try await body()
        case (.world, .load):
            await leave(.world)
            do {
                let result = try await holding(.load, body)
                await enter(.world) // the rest of the test holds its slot again
                return result
            } catch {
                await enter(.world)
                throw error
            }
        case (nil, _):
            return try await holding(claim, body)
        }
    }

    private nonisolated func holding<T: Sendable>(_ claim: Claim, _ body: () async throws -> T) async throws -> T {
        await enter(claim)
        do {
            let result = try await Self.$held.withValue(claim) { try await body() }
            await leave(claim)
            return result
        } catch {
            await leave(claim)
            throw error
        }
    }

    private func slots(_ claim: Claim) -> Int {
        claim == .world ? 1 : capacity
    }

    private func enter(_ claim: Claim) async {
        if waiting.isEmpty, inUse + slots(claim) <= capacity {
            inUse += slots(claim)
            return
        }
        await withCheckedContinuation { continuation in
            waiting.append((claim, continuation))
        }
    }

    private func leave(_ claim: Claim) {
        inUse -= slots(claim)
        // First come, first served: the first waiter that does not fit stops the others too.
        while let first = waiting.first, inUse + slots(first.claim) <= capacity {
            waiting.removeFirst()
            inUse += slots(first.claim)
            first.continuation.resume()
        }
    }
}

/// The trait behind ``Trait/startsProcesses`` and ``Trait/loadTest``.
public struct ProcessGateTrait: SuiteTrait, TestTrait, TestScoping {
    let claim: ProcessGate.Claim

    /// Applied to every test of a suite it marks.
    public var isRecursive: Bool { true }

    /// Each test (each case of a parameterised one) takes its slots; a suite itself takes none.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let asked = ContinuousClock.now
        var entered = asked
        let outermost = ProcessGate.held == nil // a test marked by its suite and by itself is recorded once
        defer { if outermost { ProcessGate.record(test, claim: claim, waited: asked.duration(to: entered), held: entered.duration(to: .now)) } }
        try await ProcessGate.shared.with(claim) {
            entered = .now
            try await function()
        }
    }
}

extension Trait where Self == ProcessGateTrait {
    /// The tests start processes: at most ``ProcessGate/capacity`` of them run at once.
    public static var startsProcesses: Self { ProcessGateTrait(claim: .world) }

    /// The tests load the machine: each runs with no other process-starting test beside it.
    public static var loadTest: Self { ProcessGateTrait(claim: .load) }
}
