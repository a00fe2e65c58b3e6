/// The Matter cluster ids HomeGate maps (Matter 1.3 Application Cluster Library; the Eve cluster
/// as python-matter-server names it).
enum ClusterID {
    static let identify: UInt32 = 0x0003
    static let onOff: UInt32 = 0x0006
    static let levelControl: UInt32 = 0x0008
    static let descriptor: UInt32 = 0x001D
    static let basicInformation: UInt32 = 0x0028
    static let powerSource: UInt32 = 0x002F
    static let bridgedDeviceBasicInformation: UInt32 = 0x0039
    static let genericSwitch: UInt32 = 0x003B
    static let booleanState: UInt32 = 0x0045
    static let airQuality: UInt32 = 0x005B
    static let valveConfigurationAndControl: UInt32 = 0x0081
    static let smokeCOAlarm: UInt32 = 0x005C
    static let electricalPowerMeasurement: UInt32 = 0x0090
    static let electricalEnergyMeasurement: UInt32 = 0x0091
    static let doorLock: UInt32 = 0x0101
    static let windowCovering: UInt32 = 0x0102
    static let thermostat: UInt32 = 0x0201
    static let fanControl: UInt32 = 0x0202
    static let thermostatUserInterface: UInt32 = 0x0204
    static let colorControl: UInt32 = 0x0300
    static let illuminanceMeasurement: UInt32 = 0x0400
    static let temperatureMeasurement: UInt32 = 0x0402
    static let pressureMeasurement: UInt32 = 0x0403
    static let relativeHumidityMeasurement: UInt32 = 0x0405
    static let occupancySensing: UInt32 = 0x0406
    static let carbonMonoxideConcentration: UInt32 = 0x040C
    static let carbonDioxideConcentration: UInt32 = 0x040D
    static let pm25Concentration: UInt32 = 0x042A
    static let pm10Concentration: UInt32 = 0x042D
    static let eve: UInt32 = 0x130A_FC01

    /// Clusters that describe or run a node rather than offer a function (commissioning,
    /// networks, diagnostics, access control, groups, scenes, bindings, labels, time, updates):
    /// they get no service. The Matter spec's utility clusters.
    static let infrastructure: Set<UInt32> = [
        0x0003, 0x0004, 0x0005, 0x0062, 0x001D, 0x001E, 0x001F, 0x0028, 0x0029, 0x002A, 0x002B, 0x002C, 0x002D, 0x002E,
        0x0030, 0x0031, 0x0032, 0x0033, 0x0034, 0x0035, 0x0036, 0x0037, 0x0038, 0x0039, 0x003C, 0x003E, 0x003F, 0x0040,
        0x0041, 0x0046, 0x0025, 0x0007, 0x0204,
    ]

    /// Global attributes every cluster has (revision, feature map, attribute and command lists).
    static let globalAttributes: ClosedRange<UInt32> = 0xFFF8...0xFFFD
    static let featureMap: UInt32 = 0xFFFC
}

/// The Matter device type ids the mapping looks at.
enum DeviceTypeID {
    static let aggregator: UInt32 = 0x000E
    static let bridgedNode: UInt32 = 0x0013
    static let contactSensor: UInt32 = 0x0015
    static let waterLeakDetector: UInt32 = 0x0043
    static let rainSensor: UInt32 = 0x0044
    static let lights: Set<UInt32> = [0x0100, 0x0101, 0x010C, 0x010D]
    static let dimmablePlugInUnit: UInt32 = 0x010B
    static let mountedDimmableLoadControl: UInt32 = 0x0110
    static let plugInUnits: Set<UInt32> = [0x010A, 0x010B]
    static let fan: UInt32 = 0x002B
    static let airPurifier: UInt32 = 0x002D
}
