import Accessories
import HomeModel
import Wire

extension CommandMachine.Job {
    /// Calls the device for the job: several writes in one call (the device answers each), or
    /// one write or read.
    func run(on driver: any AccessoryDriver) async -> CommandMachine.Answer {
        if items.count > 1 {
            let writes = items.compactMap { item -> (CharacteristicReference, Value)? in
                if case .write(let value) = item.operation { (item.reference, value) } else { nil }
            }
            let written = Dictionary(writes, uniquingKeysWith: { _, last in last })
            var answer: CommandMachine.Answer = [:]
            for (reference, result) in await driver.write(writes) {
                answer[reference] = result.flatMap { written[reference].map { .success($0) } ?? .failure(StatusError(.noSuchResource, "not written")) }
            }
            return answer
        }
        guard let item = items.first else { return [:] }
        do {
            switch item.operation {
            case .write(let value):
                try await driver.write(value, to: item.reference)
                return [item.reference: .success(value)]
            case .read:
                return [item.reference: .success(try await driver.read(item.reference))]
            }
        } catch {
            return [item.reference: .failure(error)]
        }
    }

    /// The device's answer without a suspension, when it has one (a simulated accessory without
    /// latency); nil when the call takes time.
    func immediateAnswer(from driver: any AccessoryDriver) -> CommandMachine.Answer? {
        guard items.count == 1, let item = items.first else { return nil }
        switch item.operation {
        case .write(let value):
            return driver.writeNow(value, to: item.reference).map { [item.reference: $0.map { value }] }
        case .read:
            return driver.readNow(item.reference).map { [item.reference: $0] }
        }
    }
}
