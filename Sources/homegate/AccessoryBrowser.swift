import Accessories
import HAPDriver
import Logging
import MatterDriver
import Synchronization
import Timing

/// The accessory browser the management requests and the page see: HomeKit accessories found by
/// mDNS (the HAP driver's rounds) beside Matter devices in commissioning mode (the Matter
/// Server's `discover`, every ``matterInterval`` while the browser is on), as one list per round.
final class AccessoryBrowser: Sendable {
    let hap: HAPDriver
    let matter: MatterDriver?
    let logger: Logger
    /// How often the Matter Server is asked for commissionable devices while browsing (its
    /// `discover` listens for about 5 s).
    let matterInterval: Duration = .seconds(10)
    /// Each round: everything found now.
    let rounds: AsyncStream<[FoundAccessory]>
    private let continuation: AsyncStream<[FoundAccessory]>.Continuation
    private let state = Mutex(Found())
    private let wake = Alarm()

    private struct Found {
        var hap: [FoundAccessory] = []
        var matter: [FoundAccessory] = []
    }

    init(hap: HAPDriver, matter: MatterDriver?, logger: Logger) {
        self.hap = hap
        self.matter = matter
        self.logger = logger
        (rounds, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Turns the browser on or off; whether it is on now (`hap.browser: always` keeps it on).
    func setBrowsing(_ on: Bool) -> Bool {
        hap.setBrowsing(on)
        wake.ring()
        return hap.isBrowsing
    }

    /// Merges the HAP rounds and asks the Matter Server, until cancelled.
    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await round in self.hap.browser {
                    self.publish { $0.hap = round }
                }
            }
            if let matter {
                group.addTask { await self.browseMatter(matter) }
            }
        }
        continuation.finish()
    }

    private func browseMatter(_ matter: MatterDriver) async {
        while !Task.isCancelled {
            let generation = wake.generation
            if hap.isBrowsing {
                do {
                    let found = try await matter.commissionable()
                    publish { $0.matter = found }
                } catch {
                    logger.debug("Matter: no commissionable devices listed: \(error)")
                }
                try? await wake.sleep(for: matterInterval, unlessRungAfter: generation)
            } else {
                if state.withLock({ !$0.matter.isEmpty }) { publish { $0.matter = [] } }
                await wake.wait(unlessRungAfter: generation)
            }
        }
    }

    private func publish(_ change: (inout Found) -> Void) {
        let all = state.withLock { found in
            change(&found)
            return found.hap + found.matter
        }
        continuation.yield(all)
    }
}
