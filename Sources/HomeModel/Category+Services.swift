extension Category {
    /// The category of an accessory with these services: its primary visible service's (else
    /// its first visible one's) kind; `other` when that says nothing.
    public init(primaryOf services: [Service]) {
        let main = services.first { $0.isPrimary && $0.isVisible } ?? services.first(where: \.isVisible)
        switch main?.type {
        case "lightbulb": self = .lightbulb
        case "fan", "fanv2": self = .fan
        case "garage-door-opener": self = .garageDoorOpener
        case "lock-mechanism": self = .doorLock
        case "outlet": self = .outlet
        case "switch": self = .switch
        case "thermostat": self = .thermostat
        case "security-system": self = .securitySystem
        case "door": self = .door
        case "window": self = .window
        case "window-covering": self = .windowCovering
        case "stateless-programmable-switch": self = .programmableSwitch
        case "air-purifier": self = .airPurifier
        case "heater-cooler": self = .heater
        case "humidifier-dehumidifier": self = .humidifier
        case "television": self = .television
        case "valve", "irrigation-system": self = .sprinkler
        case "faucet": self = .faucet
        case "temperature-sensor", "humidity-sensor", "light-sensor", "motion-sensor", "occupancy-sensor", "contact-sensor",
             "leak-sensor", "smoke-sensor", "carbon-monoxide-sensor", "carbon-dioxide-sensor", "air-quality-sensor":
            self = .sensor
        default: self = .other
        }
    }
}
