/// The time limit of the harness's waits: a hang guard, nothing more.
///
/// Every wait of the tests' helpers (a message, a line of output, an exit, a retained value)
/// returns as soon as what it waits for happens, so a passing test never waits this out; the
/// limit only turns a hang into a failure that says what was awaited. It is long on purpose: on a
/// busy two-core machine a step that takes milliseconds when quiet can take seconds (issue 30),
/// and a guard that fires then reports a fault that is not there. How fast something happens is
/// measured by `scripts/bench`, never by a test's deadline.
public enum HangGuard {
    /// The default limit of a wait.
    public static let standard = Duration.seconds(60)
}
