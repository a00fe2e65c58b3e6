/// Runs `body`, then `cleanup` whether `body` returned or threw, awaiting it: a `defer` cannot
/// await, and a cleanup that blocks a thread instead starves the other tests of the process.
public func withCleanup<T>(_ body: () async throws -> T, cleanup: () async -> Void) async throws -> T {
    let result: T
    do {
        result = try await body()
    } catch {
        await cleanup()
        throw error
    }
    await cleanup()
    return result
}
