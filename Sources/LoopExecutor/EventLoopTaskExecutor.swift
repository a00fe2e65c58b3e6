import NIOCore

/// A task executor on one event loop: a task that prefers it runs on the loop's thread, so a
/// request written from it is written at once (no hop onto the loop) and the answer, which the
/// loop reads, resumes it there (no hop back off). HAP's `Client` and the Matter `Connection`
/// send every request this way; a caller that runs its own work under their `taskExecutor` (the
/// benchmark, as aiohomekit runs on its asyncio loop) makes round trips without a thread switch.
public final class EventLoopTaskExecutor: TaskExecutor {
    /// The loop the tasks run on.
    public let loop: any EventLoop

    public init(_ loop: any EventLoop) {
        self.loop = loop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
