import HomeModel
import Matter
import Wire

/// The table of record: which HomeKit service each Matter device type and cluster becomes, and
/// how each characteristic is read and written (docs/matter.md prints it). The order is the
/// services' order in an accessory; a rule's slot keeps its instance ids stable.
enum MappingTable {
    static let rules: [ServiceRule] = [
        lightbulb, outlet, onOffSwitch, fan, thermostat, lock, windowCovering,
        temperature, humidity, light, occupancy, contact, leak, smoke, carbonMonoxide, airQuality, battery,
        doorState, valve,
    ]

    /// The service types in the order an accessory's primary service is chosen: what the device
    /// is for before what it also reports.
    static let primaryOrder = ["lock-mechanism", "thermostat", "window-covering", "fanv2", "valve", "lightbulb", "outlet", "switch",
                               "air-quality-sensor", "smoke-sensor", "carbon-monoxide-sensor", "leak-sensor", "contact-sensor",
                               "occupancy-sensor", "temperature-sensor", "humidity-sensor", "light-sensor", "stateless-programmable-switch"]

    // MARK: Lights, plugs, switches

    private static let on = CharacteristicRule("on", [(ClusterID.onOff, 0)], read: { view in
        view.bool(ClusterID.onOff, 0).map(Value.bool)
    }, write: { value, _ in
        .command(cluster: ClusterID.onOff, name: value.isTrue ? "On" : "Off", payload: [:])
    })

    private static let brightness = CharacteristicRule("brightness", [(ClusterID.levelControl, 0)], read: { view in
        view.number(ClusterID.levelControl, 0).map { .int(Int64(MatterUnits.percent(level: $0))) }
    }, write: { value, view in
        let minimum = view.number(ClusterID.levelControl, 2).map(Int.init) ?? 1
        return .command(cluster: ClusterID.levelControl, name: "MoveToLevelWithOnOff",
                        payload: ["level": .int(Int64(MatterUnits.level(percent: value.number ?? 0, minimum: minimum))), "transitionTime": 0])
    })

    private static let hue = CharacteristicRule("hue", [(ClusterID.colorControl, 0)], read: { view in
        view.number(ClusterID.colorControl, 0).map { .float(Double(MatterUnits.degrees(hue: $0))) }
    }, write: { value, _ in
        .command(cluster: ClusterID.colorControl, name: "MoveToHue",
                 payload: ["hue": .int(Int64(MatterUnits.hue(degrees: value.number ?? 0))), "direction": 0, "transitionTime": 0])
    }, present: { view in view.has(ClusterID.colorControl, 0) && view.features(ClusterID.colorControl) & 1 != 0 })

    private static let saturation = CharacteristicRule("saturation", [(ClusterID.colorControl, 1)], read: { view in
        view.number(ClusterID.colorControl, 1).map { .float(Double(MatterUnits.percent(saturation: $0))) }
    }, write: { value, _ in
        .command(cluster: ClusterID.colorControl, name: "MoveToSaturation",
                 payload: ["saturation": .int(Int64(MatterUnits.saturation(percent: value.number ?? 0))), "transitionTime": 0])
    }, present: { view in view.has(ClusterID.colorControl, 1) && view.features(ClusterID.colorControl) & 1 != 0 })

    private static let colorTemperature = CharacteristicRule("color-temperature", [(ClusterID.colorControl, 7)], read: { view in
        view.number(ClusterID.colorControl, 7).map { .uint(UInt64(max(0, $0))) }
    }, write: { value, _ in
        .command(cluster: ClusterID.colorControl, name: "MoveToColorTemperature",
                 payload: ["colorTemperatureMireds": .int(Int64(value.number ?? 0)), "transitionTime": 0])
    }, bounds: { view in
        guard let low = view.number(ClusterID.colorControl, 0x400B), let high = view.number(ClusterID.colorControl, 0x400C), low > 0, high >= low else {
            return nil
        }
        return AccessoryBlueprint.Bounds(minValue: low, maxValue: high, minStep: 1)
    }, present: { view in view.has(ClusterID.colorControl, 7) && view.features(ClusterID.colorControl) & 0x10 != 0 })

    /// Electrical power and energy as the characteristics HomeGate names for Eve: Matter's
    /// Electrical Power/Energy Measurement clusters, else Eve's own cluster.
    private static let power = CharacteristicRule(EveUUID.power, [(ClusterID.electricalPowerMeasurement, 8)], read: { view in
        (view.number(ClusterID.electricalPowerMeasurement, 8).map { $0 / 1000 } ?? view.number(ClusterID.eve, 0x130A_000A).map(MatterUnits.single))
            .map(Value.float)
    }, present: { view in view.has(ClusterID.electricalPowerMeasurement, 8) || view.has(ClusterID.eve, 0x130A_000A) })
    private static let energy = CharacteristicRule(EveUUID.energy, [(ClusterID.electricalEnergyMeasurement, 1)], read: { view in
        let matter = view[ClusterID.electricalEnergyMeasurement, 1].flatMap { ($0["0"] ?? $0["energy"])?.double }.map { $0 / 1_000_000 }
        return (matter ?? view.number(ClusterID.eve, 0x130A_000B).map(MatterUnits.single)).map(Value.float)
    }, present: { view in view.has(ClusterID.electricalEnergyMeasurement, 1) || view.has(ClusterID.eve, 0x130A_000B) })
    private static let voltage = CharacteristicRule(EveUUID.voltage, [(ClusterID.electricalPowerMeasurement, 4)], read: { view in
        (view.number(ClusterID.electricalPowerMeasurement, 4).map { $0 / 1000 } ?? view.number(ClusterID.eve, 0x130A_0008).map(MatterUnits.single))
            .map(Value.float)
    }, present: { view in view.has(ClusterID.electricalPowerMeasurement, 4) || view.has(ClusterID.eve, 0x130A_0008) })
    private static let current = CharacteristicRule(EveUUID.current, [(ClusterID.electricalPowerMeasurement, 5)], read: { view in
        (view.number(ClusterID.electricalPowerMeasurement, 5).map { $0 / 1000 } ?? view.number(ClusterID.eve, 0x130A_0009).map(MatterUnits.single))
            .map(Value.float)
    }, present: { view in view.has(ClusterID.electricalPowerMeasurement, 5) || view.has(ClusterID.eve, 0x130A_0009) })
    private static let metering = [power, energy, voltage, current].map(withEveSources)
    private static let meteringClusters: Set<UInt32> = [ClusterID.electricalPowerMeasurement, ClusterID.electricalEnergyMeasurement, ClusterID.eve]

    static let lightbulb = ServiceRule(type: "lightbulb", slot: 1, covers: [ClusterID.onOff, ClusterID.levelControl, ClusterID.colorControl],
                                       applies: { view in
        view.hasServer(ClusterID.onOff) && !view.deviceTypes.filter {
            DeviceTypeID.lights.contains($0) || $0 == DeviceTypeID.dimmablePlugInUnit || $0 == DeviceTypeID.mountedDimmableLoadControl
        }.isEmpty
    }, characteristics: [on, brightness, hue, saturation, colorTemperature])

    static let outlet = ServiceRule(type: "outlet", slot: 2, covers: meteringClusters.union([ClusterID.onOff]), applies: { view in
        view.hasServer(ClusterID.onOff) && view.deviceTypes.contains(0x010A) && !lightbulb.applies(view)
    }, characteristics: [on, CharacteristicRule("outlet-in-use", [(ClusterID.onOff, 0)], read: { view in
        // Matter has no "in use": with a power measurement, drawing power; else switched on.
        if let watts = view.number(ClusterID.electricalPowerMeasurement, 8).map({ $0 / 1000 }) ?? view.number(ClusterID.eve, 0x130A_000A) {
            return .bool(watts > 0)
        }
        return view.bool(ClusterID.onOff, 0).map(Value.bool)
    }).withSources([(ClusterID.onOff, 0), (ClusterID.electricalPowerMeasurement, 8), (ClusterID.eve, 0x130A_000A)])] + metering)

    static let onOffSwitch = ServiceRule(type: "switch", slot: 3, covers: meteringClusters.union([ClusterID.onOff]), applies: { view in
        // On/Off on a light or a plug is that service's; anywhere else (a switch, an air
        // conditioner's or a thermostat's power) it is a switch of its own, as Home Assistant's power switch.
        view.hasServer(ClusterID.onOff) && !lightbulb.applies(view) && !outlet.applies(view)
    }, characteristics: [on] + metering)

    // MARK: Fan

    static let fan = ServiceRule(type: "fanv2", slot: 4, covers: [ClusterID.fanControl], applies: { view in
        view.hasServer(ClusterID.fanControl)
    }, characteristics: [
        CharacteristicRule("active", [(ClusterID.fanControl, 0)], read: { view in
            view.number(ClusterID.fanControl, 0).map { .uint($0 == 0 ? 0 : 1) }
        }, write: { value, _ in
            // FanMode On (4): the spec's "turn on", which a fan takes as High.
            .attribute(cluster: ClusterID.fanControl, attribute: 0, value: value.number == 0 ? 0 : 4)
        }),
        CharacteristicRule("rotation-speed", [(ClusterID.fanControl, 3), (ClusterID.fanControl, 2)], read: { view in
            // Percent, 0...100 (a reading outside it is the device's fault: kept in bounds).
            (view.number(ClusterID.fanControl, 3) ?? view.number(ClusterID.fanControl, 2)).map { .float(min(max($0, 0), 100)) }
        }, write: { value, _ in
            .attribute(cluster: ClusterID.fanControl, attribute: 2, value: .int(Int64((value.number ?? 0).rounded())))
        }, present: { view in view.has(ClusterID.fanControl, 3) || view.has(ClusterID.fanControl, 2) }),
    ])

    // MARK: Thermostat

    /// SystemMode (0 off, 1 auto, 3 cool, 4 heat, 5 emergency heat, 6 precooling, 7 fan only,
    /// 8 dry, 9 sleep) as HomeKit's target state (0 off, 1 heat, 2 cool, 3 auto).
    static func targetState(systemMode mode: Double) -> UInt64 {
        switch mode {
        case 1: 3
        case 3, 6: 2
        case 4, 5: 1
        default: 0
        }
    }

    static func systemMode(targetState state: Double) -> Int64 {
        switch state {
        case 1: 4
        case 2: 3
        case 3: 1
        default: 0
        }
    }

    /// The setpoint attribute a single target temperature stands for: cooling in cool mode,
    /// else heating (cooling when the thermostat only cools).
    static func setpointAttribute(_ view: EndpointView) -> UInt32 {
        let mode = view.number(ClusterID.thermostat, 0x1C)
        let heats = view.has(ClusterID.thermostat, 0x12)
        if mode == 3 || mode == 6 || !heats { return 0x11 }
        return 0x12
    }

    static let thermostat = ServiceRule(type: "thermostat", slot: 5, covers: [ClusterID.thermostat, ClusterID.thermostatUserInterface], applies: { view in
        view.hasServer(ClusterID.thermostat)
    }, characteristics: [
        CharacteristicRule("current-heating-cooling-state", [(ClusterID.thermostat, 0x29), (ClusterID.thermostat, 0x1C)], read: { view in
            if let running = view.number(ClusterID.thermostat, 0x29).map({ UInt32($0) }) {
                // ThermostatRunningState: bit 0 heat, 1 cool, 3 heat stage 2, 4 cool stage 2.
                if running & 0x09 != 0 { return .uint(1) }
                if running & 0x12 != 0 { return .uint(2) }
                return .uint(0)
            }
            let state = targetState(systemMode: view.number(ClusterID.thermostat, 0x1C) ?? 0)
            return .uint(state == 3 ? 0 : state)
        }, present: { _ in true }),
        CharacteristicRule("target-heating-cooling-state", [(ClusterID.thermostat, 0x1C), (ClusterID.thermostat, 0x1B)], read: { view in
            view.number(ClusterID.thermostat, 0x1C).map { .uint(targetState(systemMode: $0)) } ?? .uint(0)
        }, write: { value, _ in
            .attribute(cluster: ClusterID.thermostat, attribute: 0x1C, value: .int(systemMode(targetState: value.number ?? 0)))
        }, validValues: { view in
            // ControlSequenceOfOperation: 0, 1 cooling only; 2, 3 heating only; 4, 5 both.
            switch view.number(ClusterID.thermostat, 0x1B) {
            case 0?, 1?: [0, 2]
            case 2?, 3?: [0, 1]
            default: view.features(ClusterID.thermostat) & 0x20 != 0 ? [0, 1, 2, 3] : [0, 1, 2]
            }
        }, present: { _ in true }),
        CharacteristicRule("current-temperature", [(ClusterID.thermostat, 0)], read: { view in
            view.number(ClusterID.thermostat, 0).map { .float(MatterUnits.celsius(centi: $0)) }
        }, present: { _ in true }),
        CharacteristicRule("target-temperature", [(ClusterID.thermostat, 0x12), (ClusterID.thermostat, 0x11), (ClusterID.thermostat, 0x1C)],
                           read: { view in
            view.number(ClusterID.thermostat, setpointAttribute(view)).map { .float(MatterUnits.celsius(centi: $0)) }
        }, write: { value, view in
            .attribute(cluster: ClusterID.thermostat, attribute: setpointAttribute(view), value: .int(Int64(MatterUnits.centi(celsius: value.number ?? 0))))
        }, bounds: { view in
            let heat = setpointAttribute(view) == 0x12
            let low = view.number(ClusterID.thermostat, heat ? 0x15 : 0x17) ?? view.number(ClusterID.thermostat, heat ? 0x03 : 0x05)
            let high = view.number(ClusterID.thermostat, heat ? 0x16 : 0x18) ?? view.number(ClusterID.thermostat, heat ? 0x04 : 0x06)
            guard let low, let high, high > low else { return nil }
            return AccessoryBlueprint.Bounds(minValue: MatterUnits.celsius(centi: low), maxValue: MatterUnits.celsius(centi: high), minStep: 0.1)
        }, present: { view in view.has(ClusterID.thermostat, 0x12) || view.has(ClusterID.thermostat, 0x11) }),
        CharacteristicRule("temperature-display-units", [(ClusterID.thermostatUserInterface, 0)], read: { view in
            .uint(view.number(ClusterID.thermostatUserInterface, 0) == 1 ? 1 : 0)
        }, write: { value, view in
            view.has(ClusterID.thermostatUserInterface, 0)
                ? .attribute(cluster: ClusterID.thermostatUserInterface, attribute: 0, value: .int(value.number == 1 ? 1 : 0)) : nil
        }, present: { _ in true }),
        CharacteristicRule("heating-threshold-temperature", [(ClusterID.thermostat, 0x12)], read: { view in
            view.number(ClusterID.thermostat, 0x12).map { .float(MatterUnits.celsius(centi: $0)) }
        }, write: { value, _ in
            .attribute(cluster: ClusterID.thermostat, attribute: 0x12, value: .int(Int64(MatterUnits.centi(celsius: value.number ?? 0))))
        }, present: { view in view.features(ClusterID.thermostat) & 0b11 == 0b11 && view.has(ClusterID.thermostat, 0x12) }),
        CharacteristicRule("cooling-threshold-temperature", [(ClusterID.thermostat, 0x11)], read: { view in
            view.number(ClusterID.thermostat, 0x11).map { .float(MatterUnits.celsius(centi: $0)) }
        }, write: { value, _ in
            .attribute(cluster: ClusterID.thermostat, attribute: 0x11, value: .int(Int64(MatterUnits.centi(celsius: value.number ?? 0))))
        }, present: { view in view.features(ClusterID.thermostat) & 0b11 == 0b11 && view.has(ClusterID.thermostat, 0x11) }),
    ], extras: [(ClusterID.thermostat, 0x02), (ClusterID.thermostat, 0x1A), (ClusterID.thermostatUserInterface, 0x01)]) // Occupancy, RemoteSensing, KeypadLockout

    // MARK: Lock, covering

    /// LockState (0 not fully locked, 1 locked, 2 unlocked, 3 unlatched) as HomeKit's current
    /// state (0 unsecured, 1 secured, 2 jammed, 3 unknown).
    static func lockCurrentState(_ state: Double?) -> UInt64 {
        switch state {
        case 0?: 2
        case 1?: 1
        case 2?, 3?: 0
        default: 3
        }
    }

    static let lock = ServiceRule(type: "lock-mechanism", slot: 6, covers: [ClusterID.doorLock], applies: { view in
        view.hasServer(ClusterID.doorLock)
    }, characteristics: [
        CharacteristicRule("lock-current-state", [(ClusterID.doorLock, 0)], read: { view in
            .uint(lockCurrentState(view.number(ClusterID.doorLock, 0)))
        }, present: { _ in true }),
        CharacteristicRule("lock-target-state", [(ClusterID.doorLock, 0)], read: { view in
            view.number(ClusterID.doorLock, 0).map { .uint($0 == 1 ? 1 : 0) }
        }, write: { value, _ in
            // Door Lock commands need a timed interaction.
            .command(cluster: ClusterID.doorLock, name: value.number == 1 ? "LockDoor" : "UnlockDoor", payload: [:], timed: true)
        }, present: { _ in true }),
    ])

    static let windowCovering = ServiceRule(type: "window-covering", slot: 7, covers: [ClusterID.windowCovering], applies: { view in
        view.hasServer(ClusterID.windowCovering)
    }, characteristics: [
        CharacteristicRule("current-position", [(ClusterID.windowCovering, 0x0E)], read: { view in
            view.number(ClusterID.windowCovering, 0x0E).map { .uint(UInt64(MatterUnits.position(percent100thsClosed: $0))) }
        }, present: { _ in true }),
        CharacteristicRule("target-position", [(ClusterID.windowCovering, 0x0B)], read: { view in
            view.number(ClusterID.windowCovering, 0x0B).map { .uint(UInt64(MatterUnits.position(percent100thsClosed: $0))) }
        }, write: { value, _ in
            .command(cluster: ClusterID.windowCovering, name: "GoToLiftPercentage",
                     payload: ["liftPercent100thsValue": .int(Int64(MatterUnits.percent100thsClosed(position: value.number ?? 0)))])
        }, present: { _ in true }),
        CharacteristicRule("position-state", [(ClusterID.windowCovering, 0x0A)], read: { view in
            // OperationalStatus bits 0-1 (global): 1 opening, 2 closing; HomeKit: 0 closing, 1 opening, 2 stopped.
            let status = view.number(ClusterID.windowCovering, 0x0A).map { Int($0) & 0b11 } ?? 0
            return .uint(status == 1 ? 1 : status == 2 ? 0 : 2)
        }, present: { _ in true }),
        CharacteristicRule("hold-position", [], read: { _ in nil }, write: { _, _ in
            .command(cluster: ClusterID.windowCovering, name: "StopMotion", payload: [:])
        }),
    ], extras: [(ClusterID.windowCovering, 0x07)]) // ConfigStatus (bit 0 operational: a motor problem when clear)

    /// A door lock's DoorState (0 open, 1 closed, 2 jammed, 3 forced open, 4 error, 5 ajar) as a
    /// contact sensor beside the lock: contact only when closed.
    static let doorState = ServiceRule(type: "contact-sensor", slot: 18, covers: [], applies: { view in
        view.hasServer(ClusterID.doorLock) && view.has(ClusterID.doorLock, 3)
    }, characteristics: [
        CharacteristicRule("contact-sensor-state", [(ClusterID.doorLock, 3)], read: { view in
            view.number(ClusterID.doorLock, 3).map { .uint($0 == 1 ? 0 : 1) }
        }, present: { _ in true }),
    ])

    /// Valve Configuration and Control as HomeKit's Valve: TargetState (0 closed, 1 open) as
    /// active, CurrentState open as in use, ValveFault as a fault; set with Open and Close.
    static let valve = ServiceRule(type: "valve", slot: 19, covers: [ClusterID.valveConfigurationAndControl], applies: { view in
        view.hasServer(ClusterID.valveConfigurationAndControl)
    }, characteristics: [
        CharacteristicRule("active", [(ClusterID.valveConfigurationAndControl, 4), (ClusterID.valveConfigurationAndControl, 3)], read: { view in
            (view.number(ClusterID.valveConfigurationAndControl, 4) ?? view.number(ClusterID.valveConfigurationAndControl, 3)).map { .uint($0 == 1 ? 1 : 0) }
        }, write: { value, _ in
            .command(cluster: ClusterID.valveConfigurationAndControl, name: value.isTrue ? "Open" : "Close", payload: [:])
        }, present: { _ in true }),
        CharacteristicRule("in-use", [(ClusterID.valveConfigurationAndControl, 3)], read: { view in
            view.number(ClusterID.valveConfigurationAndControl, 3).map { .uint($0 == 1 ? 1 : 0) }
        }, present: { _ in true }),
        CharacteristicRule("valve-type", [], read: { _ in .uint(0) }),
        CharacteristicRule("status-fault", [(ClusterID.valveConfigurationAndControl, 9)], read: { view in
            view.number(ClusterID.valveConfigurationAndControl, 9).map { .uint($0 == 0 ? 0 : 1) }
        }),
    ], extras: [(ClusterID.valveConfigurationAndControl, 1), (ClusterID.valveConfigurationAndControl, 6)]) // RemainingDuration, CurrentLevel

    // MARK: Sensors

    private static func measurement(_ type: String, slot: Int, cluster: UInt32, characteristic: String,
                                    _ convert: @escaping @Sendable (Double) -> Value) -> ServiceRule {
        ServiceRule(type: type, slot: slot, covers: [cluster], applies: { view in view.hasServer(cluster) }, characteristics: [
            CharacteristicRule(characteristic, [(cluster, 0)], read: { view in view.number(cluster, 0).map(convert) }, present: { _ in true }),
        ])
    }

    static let temperature = measurement("temperature-sensor", slot: 8, cluster: ClusterID.temperatureMeasurement,
                                         characteristic: "current-temperature") { .float(MatterUnits.celsius(centi: $0)) }
    static let humidity = measurement("humidity-sensor", slot: 9, cluster: ClusterID.relativeHumidityMeasurement,
                                      characteristic: "current-relative-humidity") { .float(MatterUnits.percent(hundredths: $0)) }
    static let light = measurement("light-sensor", slot: 10, cluster: ClusterID.illuminanceMeasurement,
                                   characteristic: "current-ambient-light-level") { .float(MatterUnits.lux(measured: $0)) }
    static let occupancy = measurement("occupancy-sensor", slot: 11, cluster: ClusterID.occupancySensing,
                                       characteristic: "occupancy-detected") { .uint(UInt64(Int($0) & 1)) }

    /// Boolean State as a contact sensor (true: contact, HomeKit 0) unless the endpoint is a
    /// water leak or rain detector (true: leak, HomeKit 1).
    private static func isLeakDetector(_ view: EndpointView) -> Bool {
        view.deviceTypes.contains(DeviceTypeID.waterLeakDetector) || view.deviceTypes.contains(DeviceTypeID.rainSensor)
    }

    static let contact = ServiceRule(type: "contact-sensor", slot: 12, covers: [ClusterID.booleanState], applies: { view in
        view.hasServer(ClusterID.booleanState) && !isLeakDetector(view)
    }, characteristics: [
        CharacteristicRule("contact-sensor-state", [(ClusterID.booleanState, 0)], read: { view in
            view.bool(ClusterID.booleanState, 0).map { .uint($0 ? 0 : 1) }
        }, present: { _ in true }),
    ])

    static let leak = ServiceRule(type: "leak-sensor", slot: 13, covers: [ClusterID.booleanState], applies: { view in
        view.hasServer(ClusterID.booleanState) && isLeakDetector(view)
    }, characteristics: [
        CharacteristicRule("leak-detected", [(ClusterID.booleanState, 0)], read: { view in
            view.bool(ClusterID.booleanState, 0).map { .uint($0 ? 1 : 0) }
        }, present: { _ in true }),
    ])

    /// Smoke CO Alarm: SmokeState / COState (0 normal, 1 warning, 2 critical) as detected or not.
    static let smoke = ServiceRule(type: "smoke-sensor", slot: 14, covers: [ClusterID.smokeCOAlarm], applies: { view in
        view.hasServer(ClusterID.smokeCOAlarm) && view.features(ClusterID.smokeCOAlarm) & 1 != 0
    }, characteristics: [
        CharacteristicRule("smoke-detected", [(ClusterID.smokeCOAlarm, 1)], read: { view in
            view.number(ClusterID.smokeCOAlarm, 1).map { .uint($0 > 0 ? 1 : 0) }
        }, present: { _ in true }),
        CharacteristicRule("status-low-battery", [(ClusterID.smokeCOAlarm, 3)], read: { view in
            view.number(ClusterID.smokeCOAlarm, 3).map { .uint($0 > 0 ? 1 : 0) }
        }),
        CharacteristicRule("status-fault", [(ClusterID.smokeCOAlarm, 6)], read: { view in
            view.bool(ClusterID.smokeCOAlarm, 6).map { .uint($0 ? 1 : 0) }
        }),
    ], extras: [(ClusterID.smokeCOAlarm, 4), (ClusterID.smokeCOAlarm, 5), (ClusterID.smokeCOAlarm, 7)]) // DeviceMuted, TestInProgress, EndOfServiceAlert

    static let carbonMonoxide = ServiceRule(type: "carbon-monoxide-sensor", slot: 15, covers: [ClusterID.smokeCOAlarm, ClusterID.carbonMonoxideConcentration],
                                            applies: { view in
        view.hasServer(ClusterID.smokeCOAlarm) && view.features(ClusterID.smokeCOAlarm) & 2 != 0
    }, characteristics: [
        CharacteristicRule("carbon-monoxide-detected", [(ClusterID.smokeCOAlarm, 2)], read: { view in
            view.number(ClusterID.smokeCOAlarm, 2).map { .uint($0 > 0 ? 1 : 0) }
        }, present: { _ in true }),
        CharacteristicRule("carbon-monoxide-level", [(ClusterID.carbonMonoxideConcentration, 0)], read: { view in
            view.number(ClusterID.carbonMonoxideConcentration, 0).map { .float(MatterUnits.single($0)) }
        }),
    ])

    /// Air Quality (0 unknown, 1 good, 2 fair, 3 moderate, 4 poor, 5 very poor, 6 extremely poor)
    /// as HomeKit's (0 unknown, 1 excellent, 2 good, 3 fair, 4 inferior, 5 poor), with the
    /// concentrations HomeKit names; a CO2 sensor without Air Quality likewise (quality unknown).
    static let airQuality = ServiceRule(type: "air-quality-sensor", slot: 16,
                                        covers: [ClusterID.airQuality, ClusterID.pm25Concentration, ClusterID.pm10Concentration,
                                                 ClusterID.carbonDioxideConcentration], applies: { view in
        view.hasServer(ClusterID.airQuality) || view.hasServer(ClusterID.carbonDioxideConcentration)
            || view.hasServer(ClusterID.pm25Concentration)
    }, characteristics: [
        CharacteristicRule("air-quality", [(ClusterID.airQuality, 0)], read: { view in
            .uint(UInt64(min(5, max(0, Int(view.number(ClusterID.airQuality, 0) ?? 0)))))
        }, present: { _ in true }),
        CharacteristicRule("pm2-5-density", [(ClusterID.pm25Concentration, 0)], read: { view in
            view.number(ClusterID.pm25Concentration, 0).map { .float(MatterUnits.single($0)) }
        }),
        CharacteristicRule("pm10-density", [(ClusterID.pm10Concentration, 0)], read: { view in
            view.number(ClusterID.pm10Concentration, 0).map { .float(MatterUnits.single($0)) }
        }),
        CharacteristicRule("carbon-dioxide-level", [(ClusterID.carbonDioxideConcentration, 0)], read: { view in
            view.number(ClusterID.carbonDioxideConcentration, 0).map { .float(MatterUnits.single($0)) }
        }),
    ])

    /// Power Source with the battery feature as HomeKit's Battery service.
    static let battery = ServiceRule(type: "battery-service", slot: 17, covers: [ClusterID.powerSource], applies: { view in
        view.hasServer(ClusterID.powerSource) && view.features(ClusterID.powerSource) & 2 != 0
    }, characteristics: [
        CharacteristicRule("status-low-battery", [(ClusterID.powerSource, 0x0E)], read: { view in
            .uint((view.number(ClusterID.powerSource, 0x0E) ?? 0) > 0 ? 1 : 0)
        }, present: { _ in true }),
        CharacteristicRule("battery-level", [(ClusterID.powerSource, 0x0C)], read: { view in
            view.number(ClusterID.powerSource, 0x0C).map { .uint(UInt64(MatterUnits.percent(halfPercents: $0))) }
        }),
        CharacteristicRule("charging-state", [(ClusterID.powerSource, 0x1A)], read: { view in
            // Not rechargeable: 2; BatChargeState 1 charging: 1; else 0.
            guard view.features(ClusterID.powerSource) & 4 != 0 else { return .uint(2) }
            return .uint(view.number(ClusterID.powerSource, 0x1A) == 1 ? 1 : 0)
        }, present: { _ in true }),
    ], extras: [(ClusterID.powerSource, 0x0B), (ClusterID.powerSource, 0x0D), (ClusterID.powerSource, 0x13), (ClusterID.powerSource, 0x14),
                (ClusterID.powerSource, 0x1B)]) // BatVoltage (mV), BatTimeRemaining (s), replacement, quantity, BatTimeToFullCharge (s)

    /// A metering characteristic reads Eve's cluster when the Matter one is absent: both are sources.
    private static func withEveSources(_ rule: CharacteristicRule) -> CharacteristicRule {
        let eveAttribute: UInt32 = switch rule.type {
        case EveUUID.power: 0x130A_000A
        case EveUUID.energy: 0x130A_000B
        case EveUUID.voltage: 0x130A_0008
        default: 0x130A_0009
        }
        return rule.withSources(rule.sources + [(ClusterID.eve, eveAttribute)])
    }
}

/// Eve's characteristic types, as HomeGate's catalog names them (`power`, `energy`, ...).
enum EveUUID {
    static let power = "E863F10D-079E-48FF-8F27-9C2605A29F52"
    static let energy = "E863F10C-079E-48FF-8F27-9C2605A29F52"
    static let voltage = "E863F10A-079E-48FF-8F27-9C2605A29F52"
    static let current = "E863F126-079E-48FF-8F27-9C2605A29F52"
}

extension CharacteristicRule {
    /// This rule computed again when any of `sources` changes.
    func withSources(_ sources: [(cluster: UInt32, attribute: UInt32)]) -> CharacteristicRule {
        CharacteristicRule(type, sources, read: read, write: write, bounds: bounds, validValues: validValues, present: present ?? { view in
            view.has(sources[0].cluster, sources[0].attribute)
        })
    }
}
