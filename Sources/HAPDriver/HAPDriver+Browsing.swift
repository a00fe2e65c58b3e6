import Accessories
import HAP
import Logging
import Timing

/// mDNS while running: one browse loop that follows paired devices to a new address, notices a
/// device's changed configuration number (`c#`: its accessories, services or characteristics
/// changed) and feeds the accessory browser.
extension HAPDriver {
    /// Turns the accessory browser on or off (it stays on with ``Configuration/alwaysBrowsing``).
    /// While on, ``browser`` gets every browse round's accessories; turned off, it gets `[]`.
    public func setBrowsing(_ on: Bool) {
        let changed = state.withLock { state -> Bool in
            defer { state.browsing = on }
            return state.browsing != on
        }
        guard changed else { return }
        if on {
            browseAlarm.ring()
        } else if !configuration.alwaysBrowsing {
            browserContinuation.yield([])
        }
    }

    /// Whether the accessory browser is on.
    public var isBrowsing: Bool {
        configuration.alwaysBrowsing || state.withLock(\.browsing)
    }

    /// Browses, then waits the interval the situation asks for (or until woken), until cancelled.
    func browse() async {
        while !Task.isCancelled {
            // Read before the plan: a ring after it (the browser turned on, a device lost during
            // the round) ends the wait below at once.
            let generation = browseAlarm.generation
            let plan = browsePlan()
            if plan.browse {
                do {
                    let found = try await Discovery.browse(for: configuration.browseWindow, destination: configuration.mdnsDestination, port: configuration.mdnsPort)
                    take(found)
                } catch {
                    reportBrowseFailure(error)
                }
            }
            try? await browseAlarm.sleep(for: plan.interval, unlessRungAfter: generation)
        }
    }

    /// Whether to browse now and how long to wait after: continuously while the browser is on,
    /// often while a paired device is unreachable, now and then while devices are paired.
    private func browsePlan() -> (browse: Bool, interval: Duration) {
        let links = state.withLock { Array($0.links.values) }
        if isBrowsing { return (true, .seconds(1)) }
        if links.contains(where: { !$0.isConnected }) { return (true, configuration.lostDeviceBrowseInterval) }
        return (!links.isEmpty, configuration.browseInterval)
    }

    /// What one browse round found: paired devices at a new address are followed, a changed
    /// `c#` makes the device's structure be read again, the rest goes to the browser.
    func take(_ found: [DiscoveredAccessory]) {
        let links = state.withLock { $0.links }
        logger.debug("mDNS: \(found.map { "\($0.deviceID) at \($0.host):\($0.port) c# \($0.configurationNumber.map(String.init) ?? "-")" }.joined(separator: ", "))")
        var unpaired: [FoundAccessory] = []
        for accessory in found where !accessory.deviceID.isEmpty {
            guard let link = links.first(where: { $0.key.uppercased() == accessory.deviceID.uppercased() })?.value else {
                unpaired.append(FoundAccessory(deviceID: accessory.deviceID.uppercased(), name: accessory.name, model: accessory.model,
                                               category: accessory.categoryIdentifier, host: accessory.host, port: accessory.port, isPaired: accessory.isPaired,
                                               transport: accessory.transport.rawValue))
                continue
            }
            if let number = accessory.configurationNumber { link.observe(configurationNumber: number) }
            if !link.isConnected, link.device.host != accessory.host || link.device.port != accessory.port {
                follow(link.device, to: accessory)
            }
        }
        if isBrowsing { browserContinuation.yield(unpaired.sorted { $0.name < $1.name }) }
    }

    /// A paired device answers at a new address: its link starts again there, and the caller
    /// stores it.
    private func follow(_ device: Device, to accessory: DiscoveredAccessory) {
        var movedDevice = device
        movedDevice.host = accessory.host
        movedDevice.port = accessory.port
        logger.notice("\(device.name) (\(device.deviceID)) moved from \(device.host):\(device.port) to \(accessory.host):\(accessory.port); following it")
        let devices = state.withLock { $0.links.values.map(\.device) }.map { $0.deviceID == device.deviceID ? movedDevice : $0 }
        replaceDevices(devices)
        moved(movedDevice)
    }

    /// A browse that fails (no multicast route, say) is logged once per different reason.
    private func reportBrowseFailure(_ error: HAPError) {
        let isNew = state.withLock { state -> Bool in
            defer { state.lastBrowseFailure = error.message }
            return state.lastBrowseFailure != error.message
        }
        if isNew { logger.warning("mDNS browse failed: \(error.message); paired devices are still reached at their stored addresses") }
    }
}
