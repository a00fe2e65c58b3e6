import Accessories
import HomeModel
import Wire

/// Camera snapshots: `<accessory topic>/$snapshot` carries a camera's still image, the raw JPEG
/// bytes, not retained. It is published on `$request/accessory/snapshot` (answered once the image
/// is out) and, when ``Gateway/Configuration/snapshotInterval`` is more than zero, for every
/// reachable camera at that interval. Live video (RTP) is not carried over MQTT.
extension Gateway {
    /// Takes a snapshot of the camera `id` and publishes it on its `$snapshot` topic; the answer
    /// names the topic and the image's size in bytes.
    /// - Throws: ``RequestError``: `not-found`, `not-allowed` (not a camera), `device-error` or
    ///   `timeout` (with the device's status).
    func snapshot(of id: AccessoryID, width: Int, height: Int) async throws -> [String: JSON] {
        guard let (_, accessory) = tree.accessory(id) else { throw RequestError.notFound("no accessory \(id)") }
        guard accessory.isCamera else {
            throw RequestError(code: "not-allowed", message: "\(accessory.name) is not a camera (it has no Camera RTP Stream Management service)")
        }
        guard let topic = tree.topic(of: id, .snapshot) else { throw RequestError.notFound("no topic for accessory \(id)") }
        let image: [UInt8]
        do {
            image = try await driver.snapshot(of: id, width: width, height: height)
        } catch {
            let code = error.status == .timedOut ? "timeout" : "device-error"
            throw RequestError(code: code, message: "\(accessory.name) gave no snapshot: \(error.message)", status: error.status)
        }
        send(topic, image, retain: false)
        return ["accessory": .string(id.rawValue), "topic": .string(topic), "bytes": .int(image.count),
                "width": .int(width), "height": .int(height)]
    }

    /// Every ``Configuration/snapshotInterval``, a snapshot of every reachable camera at the
    /// default size, published as a request's would be; a camera that fails is logged and tried
    /// again at the next interval. Runs until cancelled (only started when the interval is more
    /// than zero).
    func refreshSnapshots() async throws {
        while true {
            try await Task.sleep(for: configuration.snapshotInterval)
            let cameras = tree.homes.flatMap(\.accessories).filter { $0.isCamera && $0.isReachable }.map(\.id)
            for id in cameras {
                work.start { [weak self] in
                    guard let self else { return }
                    do {
                        _ = try await self.snapshot(of: id, width: ManagementRequest.Snapshot.defaultWidth,
                                                    height: ManagementRequest.Snapshot.defaultHeight)
                    } catch {
                        await self.logSnapshotFailure(id, error)
                    }
                }
            }
        }
    }

    private func logSnapshotFailure(_ id: AccessoryID, _ error: any Error) {
        let message = (error as? RequestError)?.message ?? "\(error)"
        logger.info("periodic snapshot of \(id) failed: \(message)")
    }
}
