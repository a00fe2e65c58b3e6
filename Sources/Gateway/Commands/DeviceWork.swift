import Synchronization
import Timing

/// The engine's device work (calls to drivers, management requests that wait for devices,
/// simulator controls, trigger fires): each piece a task of its own, started at once from the
/// engine's turn (on the device connection's event loop when it has one, so a set goes from the
/// engine's thread straight to the thread that writes it), and all of it cancelled and waited
/// for when ``run()``, which the engine's `run()` owns, is cancelled.
///
/// A command's device call is started for its job and cancelled when the command machine
/// abandons the job (``cancel(_:)``): the engine's one deadline timer decides, not a timer per call.
final class DeviceWork: Sendable {
    private struct State {
        var nextID = 0
        var running: [Int: Task<Void, Never>] = [:]
        /// The work of each command machine job under way.
        var jobs: [CommandMachine.JobID: Int] = [:]
        var stopped = false
    }

    private let state = Mutex(State())
    /// Never rung: ``run()`` waits on it only to return when its task is cancelled.
    private let stopping = Alarm()

    /// Starts `work` now, on `executor` when one is given (a device connection's event loop:
    /// the request and its answer then stay on its thread). After ``run()`` ended, it starts
    /// cancelled.
    func start(on executor: (any TaskExecutor)? = nil, for job: CommandMachine.JobID? = nil, _ work: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            // Inside the lock: the task's own removal (``finished(_:job:)``) waits for its insertion.
            let task = Task(executorPreference: executor) {
                await work()
                self.finished(id, job: job)
            }
            state.running[id] = task
            if let job { state.jobs[job] = id }
            if state.stopped { task.cancel() }
        }
    }

    /// Cancels the work started for `job`, if it still runs.
    func cancel(_ job: CommandMachine.JobID) {
        let task = state.withLock { state in state.jobs.removeValue(forKey: job).flatMap { state.running[$0] } }
        task?.cancel()
    }

    /// Waits until cancelled; then cancels the work still running and waits for it to end.
    func run() async {
        await stopping.wait(unlessRungAfter: Alarm.initialGeneration)
        let running = state.withLock { state in
            state.stopped = true
            return Array(state.running.values)
        }
        for task in running { task.cancel() }
        for task in running { await task.value }
    }

    private func finished(_ id: Int, job: CommandMachine.JobID?) {
        state.withLock { state in
            state.running[id] = nil
            if let job, state.jobs[job] == id { state.jobs[job] = nil }
        }
    }
}
