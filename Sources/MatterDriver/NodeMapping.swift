import HomeModel
import Matter
import Wire

/// How one Matter node becomes accessories of the home tree (docs/matter.md): the node an
/// accessory, a bridge's bridged devices accessories of their own behind it; each endpoint's
/// device types and clusters HomeKit services by ``MappingTable``; Generic Switch a stateless
/// programmable switch; every other application cluster a vendor-style service of its own.
///
/// A value type: made again from the node's data whenever the server describes the node anew.
struct NodeMapping: Sendable {
    let nodeID: UInt64
    /// The accessories, with structure and values.
    let accessories: [Accessory]
    /// Each characteristic's endpoint and rule.
    let bindings: [CharacteristicReference: Binding]
    /// The characteristics to compute again when an attribute changes.
    let dependents: [AttributePath: [CharacteristicReference]]
    /// A bridged device's Reachable attribute, and its accessory.
    let reachability: [AttributePath: AccessoryID]
    /// Generic Switch endpoints: the programmable switch event characteristic and the switch's features.
    let switches: [Int: (reference: CharacteristicReference, features: UInt32)]
    /// The accessory of each endpoint of a bridged device.
    let endpointAccessories: [Int: AccessoryID]

    struct Binding: Sendable {
        let endpoint: Int
        let rule: CharacteristicRule
    }

    /// The id of node `node`'s accessory (`matter-<fabric>-<node>`), or of its bridged device
    /// on `endpoint` (`...-<node>-<endpoint>`).
    static func accessoryID(fabric: UInt64, node: UInt64, endpoint: Int? = nil) -> AccessoryID {
        let base = "\(idPrefix(fabric: fabric))\(node)"
        return AccessoryID(endpoint.map { "\(base)-\($0)" } ?? base)
    }

    /// What every accessory id of fabric `fabric` starts with.
    static func idPrefix(fabric: UInt64) -> String {
        "matter-\(String(fabric, radix: 16))-"
    }

    init(node: NodeData, fabric: UInt64) {
        nodeID = node.nodeID
        var builder = Builder(node: node)
        let rootID = Self.accessoryID(fabric: fabric, node: node.nodeID)
        let bridged = Self.bridgedEndpoints(node)
        let claimed = Set(bridged.flatMap { $0.value })
        let aggregators = Set(node.endpoints.filter { EndpointView(node: node, endpoint: $0).deviceTypes.contains(DeviceTypeID.aggregator) })
        let rootEndpoints = node.endpoints.filter { !claimed.contains($0) && !aggregators.contains($0) }
        var accessories = [builder.accessory(id: rootID, endpoints: rootEndpoints, information: 0, informationCluster: ClusterID.basicInformation,
                                             bridgeID: nil, isBridge: !bridged.isEmpty)]
        var endpointAccessories: [Int: AccessoryID] = [:]
        for (endpoint, endpoints) in bridged.sorted(by: { $0.key < $1.key }) {
            let id = Self.accessoryID(fabric: fabric, node: node.nodeID, endpoint: endpoint)
            for part in endpoints { endpointAccessories[part] = id }
            var accessory = builder.accessory(id: id, endpoints: endpoints, information: endpoint,
                                              informationCluster: ClusterID.bridgedDeviceBasicInformation, bridgeID: rootID, isBridge: false)
            let reachable = AttributePath(endpoint: endpoint, cluster: ClusterID.bridgedDeviceBasicInformation, attribute: 0x11)
            builder.reachability[reachable] = id
            accessory.isReachable = node.isAvailable && node.attributes[reachable]?.bool != false
            accessories.append(accessory)
        }
        accessories[0].isReachable = node.isAvailable
        self.accessories = accessories
        bindings = builder.bindings
        dependents = builder.dependents
        reachability = builder.reachability
        switches = builder.switches
        self.endpointAccessories = endpointAccessories
    }

    /// Each Bridged Node endpoint with the endpoints it is made of (itself and its parts).
    static func bridgedEndpoints(_ node: NodeData) -> [Int: [Int]] {
        var bridged: [Int: [Int]] = [:]
        for endpoint in node.endpoints {
            let view = EndpointView(node: node, endpoint: endpoint)
            guard view.deviceTypes.contains(DeviceTypeID.bridgedNode) else { continue }
            bridged[endpoint] = ([endpoint] + view.parts).filter { node.endpoints.contains($0) }
        }
        return bridged
    }

    /// The accessory an endpoint's services belong to (a bridged device's, else the node's).
    func accessory(ofEndpoint endpoint: Int) -> AccessoryID? {
        endpointAccessories[endpoint] ?? accessories.first?.id
    }

    /// The value of `reference` computed from `node`, if it has a binding.
    func value(of reference: CharacteristicReference, in node: NodeData) -> Value? {
        guard let binding = bindings[reference] else { return nil }
        return binding.rule.read(EndpointView(node: node, endpoint: binding.endpoint))
    }

    /// Makes the accessories and records the bindings.
    private struct Builder {
        let node: NodeData
        var bindings: [CharacteristicReference: Binding] = [:]
        var dependents: [AttributePath: [CharacteristicReference]] = [:]
        var reachability: [AttributePath: AccessoryID] = [:]
        var switches: [Int: (reference: CharacteristicReference, features: UInt32)] = [:]

        init(node: NodeData) {
            self.node = node
        }

        mutating func accessory(id: AccessoryID, endpoints: [Int], information: Int, informationCluster: UInt32, bridgeID: AccessoryID?,
                                isBridge: Bool) -> Accessory {
            let info = EndpointView(node: node, endpoint: information)
            func text(_ attribute: UInt32) -> String { info[informationCluster, attribute]?.string ?? "" }
            let label = text(5).isEmpty ? text(3) : text(5)
            let name = label.isEmpty ? (bridgeID == nil ? "Matter node \(node.nodeID)" : "Matter device \(information)") : label
            var services = [informationService(name: name, manufacturer: text(1), model: text(3), serial: text(0x0F), firmware: text(0x0A))]
            var switchIndex = 0
            for endpoint in endpoints {
                services += self.services(of: EndpointView(node: node, endpoint: endpoint), accessory: id, switchIndex: &switchIndex)
            }
            let primary = services.indices.dropFirst().min { first, second in
                let order = MappingTable.primaryOrder
                return (order.firstIndex(of: services[first].type) ?? order.count) < (order.firstIndex(of: services[second].type) ?? order.count)
            }
            if let primary, MappingTable.primaryOrder.contains(services[primary].type) { services[primary].isPrimary = true }
            return Accessory(id: id, name: name, manufacturer: text(1), model: text(3), serialNumber: text(0x0F), firmwareRevision: text(0x0A),
                             category: isBridge ? .bridge : Category(primaryOf: services), isReachable: node.isAvailable, bridgeID: bridgeID,
                             services: services)
        }

        private func informationService(name: String, manufacturer: String, model: String, serial: String, firmware: String) -> Service {
            let values: [(String, String?)] = [("identify", nil), ("manufacturer", manufacturer), ("model", model), ("name", name),
                                               ("serial-number", serial), ("firmware-revision", firmware)]
            let characteristics = values.enumerated().compactMap { index, entry -> Characteristic? in
                guard let type = Catalog.standard.characteristic(entry.0) else { return nil }
                return Characteristic(iid: 2 + index, standard: type, value: entry.1.map(Value.string))
            }
            let type = Catalog.standard.service("accessory-information")
            return Service(iid: 1, type: "accessory-information", uuid: type?.uuid ?? "", characteristics: characteristics)
        }

        /// The services of one endpoint: the table's, a programmable switch, and a vendor-style
        /// service for each application cluster no rule covers.
        private mutating func services(of view: EndpointView, accessory: AccessoryID, switchIndex: inout Int) -> [Service] {
            var services: [Service] = []
            var covered: Set<UInt32> = ClusterID.infrastructure
            for rule in MappingTable.rules where rule.applies(view) {
                covered.formUnion(rule.covers)
                if let service = service(rule, view: view, accessory: accessory) { services.append(service) }
            }
            if view.hasServer(ClusterID.genericSwitch) {
                covered.insert(ClusterID.genericSwitch)
                switchIndex += 1
                services.append(programmableSwitch(view, accessory: accessory, index: switchIndex))
            }
            let others = view.serverClusters.filter { !covered.contains($0) }.sorted()
            for (index, cluster) in others.prefix(127).enumerated() {
                services.append(vendorService(cluster, slot: 128 + index, view: view, accessory: accessory))
            }
            return services
        }

        static func serviceIID(endpoint: Int, slot: Int) -> Int {
            ((endpoint + 1) << 16) | (slot << 8)
        }

        private mutating func service(_ rule: ServiceRule, view: EndpointView, accessory: AccessoryID) -> Service? {
            guard let type = Catalog.standard.service(rule.type) else { return nil }
            let serviceIID = Self.serviceIID(endpoint: view.endpoint, slot: rule.slot)
            var characteristics: [Characteristic] = []
            for (index, characteristicRule) in rule.characteristics.enumerated() where characteristicRule.isPresent(on: view) {
                guard let characteristic = characteristic(characteristicRule, iid: serviceIID + 1 + index, view: view) else { continue }
                bind(characteristicRule, CharacteristicReference(accessoryID: accessory, iid: characteristic.iid), endpoint: view.endpoint)
                characteristics.append(characteristic)
            }
            for (index, extra) in rule.extras.enumerated() {
                let path = AttributePath(endpoint: view.endpoint, cluster: extra.cluster, attribute: extra.attribute)
                guard let json = node.attributes[path] else { continue }
                characteristics.append(vendorCharacteristic(path, sample: json, iid: serviceIID + 64 + index, view: view, accessory: accessory))
            }
            return Service(iid: serviceIID, type: rule.type, uuid: type.uuid, characteristics: characteristics)
        }

        private mutating func bind(_ rule: CharacteristicRule, _ reference: CharacteristicReference, endpoint: Int) {
            bindings[reference] = Binding(endpoint: endpoint, rule: rule)
            for source in rule.sources {
                dependents[AttributePath(endpoint: endpoint, cluster: source.cluster, attribute: source.attribute), default: []].append(reference)
            }
        }

        /// A characteristic of the catalog (or a vendor type it knows) with the device's bounds
        /// and valid values, read-only when the rule has no write.
        private func characteristic(_ rule: CharacteristicRule, iid: Int, view: EndpointView) -> Characteristic? {
            let value = rule.read(view)
            if let standard = Catalog.standard.characteristic(rule.type) {
                var perms = standard.perms
                if rule.write == nil { perms.removeAll { $0 == .write } }
                let bounds = rule.bounds?(view)
                let validValues = rule.validValues?(view)
                if perms == standard.perms, bounds == nil, validValues == nil {
                    return Characteristic(iid: iid, standard: standard, value: value)
                }
                return Characteristic(iid: iid, type: standard.name, uuid: standard.uuid, format: standard.format, perms: perms, unit: standard.unit,
                                      minValue: bounds?.minValue ?? standard.minValue, maxValue: bounds?.maxValue ?? standard.maxValue,
                                      minStep: bounds?.minStep ?? standard.minStep, maxLen: standard.maxLen,
                                      validValues: validValues ?? standard.validValues?.map(\.value), value: value)
            }
            guard let vendor = Catalog.standard.vendorCharacteristic(rule.type) else { return nil }
            return Characteristic(iid: iid, type: vendor.uuid, uuid: vendor.uuid, format: vendor.format ?? .float, perms: vendor.perms ?? [.read, .events],
                                  unit: vendor.unit, minValue: vendor.minValue, maxValue: vendor.maxValue, minStep: vendor.minStep, value: value)
        }

        /// One attribute as a read-only characteristic of a Matter-derived custom type, named after it.
        private mutating func vendorCharacteristic(_ path: AttributePath, sample: JSON, iid: Int, view: EndpointView,
                                                   accessory: AccessoryID) -> Characteristic {
            let rule = VendorAttribute.rule(path, sample: sample)
            let format = VendorAttribute.format(of: sample)
            let uuid = VendorAttribute.uuid(cluster: path.cluster, attribute: path.attribute)
            let characteristic = Characteristic(iid: iid, type: uuid, uuid: uuid, format: format, perms: [.read, .events],
                                                maxLen: format == .string ? 256 : nil, value: rule.read(view),
                                                description: MatterNames.attribute(cluster: path.cluster, attribute: path.attribute))
            bind(rule, CharacteristicReference(accessoryID: accessory, iid: iid), endpoint: view.endpoint)
            return characteristic
        }

        /// Generic Switch (momentary) as a stateless programmable switch: its events arrive as
        /// node events (``MatterDriver``), its value is never kept.
        private mutating func programmableSwitch(_ view: EndpointView, accessory: AccessoryID, index: Int) -> Service {
            let serviceIID = Self.serviceIID(endpoint: view.endpoint, slot: 20)
            var characteristics: [Characteristic] = []
            if let event = Catalog.standard.characteristic("programmable-switch-event") {
                characteristics.append(Characteristic(iid: serviceIID + 1, standard: event))
                switches[view.endpoint] = (CharacteristicReference(accessoryID: accessory, iid: serviceIID + 1), view.features(ClusterID.genericSwitch))
            }
            if let label = Catalog.standard.characteristic("service-label-index") {
                characteristics.append(Characteristic(iid: serviceIID + 2, standard: label, value: .uint(UInt64(index))))
            }
            // The switch's position (a latching or multi-position switch reports where it is).
            let position = AttributePath(endpoint: view.endpoint, cluster: ClusterID.genericSwitch, attribute: 1)
            if let json = node.attributes[position] {
                characteristics.append(vendorCharacteristic(position, sample: json, iid: serviceIID + 3, view: view, accessory: accessory))
            }
            let type = Catalog.standard.service("stateless-programmable-switch")
            return Service(iid: serviceIID, type: "stateless-programmable-switch", uuid: type?.uuid ?? "", characteristics: characteristics)
        }

        /// A cluster with no HomeKit counterpart, kept: a service of a Matter-derived custom type
        /// named after the cluster, each attribute a read-only characteristic named after it.
        private mutating func vendorService(_ cluster: UInt32, slot: Int, view: EndpointView, accessory: AccessoryID) -> Service {
            let serviceIID = Self.serviceIID(endpoint: view.endpoint, slot: slot)
            let attributes = node.attributes.keys.filter {
                $0.endpoint == view.endpoint && $0.cluster == cluster && !ClusterID.globalAttributes.contains($0.attribute)
            }.sorted().prefix(255)
            var characteristics: [Characteristic] = []
            for (index, path) in attributes.enumerated() {
                characteristics.append(vendorCharacteristic(path, sample: node.attributes[path] ?? .null, iid: serviceIID + 1 + index, view: view,
                                                            accessory: accessory))
            }
            return Service(iid: serviceIID, type: VendorAttribute.serviceUUID(cluster: cluster), uuid: VendorAttribute.serviceUUID(cluster: cluster),
                           name: MatterNames.cluster(cluster), characteristics: characteristics)
        }
    }
}

/// The attributes of clusters HomeKit has no service for, as custom characteristics: types
/// derived from the cluster and attribute ids under a base UUID of HomeGate's own
/// (`…-8000-4D6174746572`, "Matter" in ASCII).
enum VendorAttribute {
    static func serviceUUID(cluster: UInt32) -> String {
        "\(hex(cluster, 8))-0000-1000-8000-4D6174746572"
    }

    static func uuid(cluster: UInt32, attribute: UInt32) -> String {
        "\(hex(attribute, 8))-\(hex(cluster >> 16, 4))-\(hex(cluster & 0xFFFF, 4))-8001-4D6174746572"
    }

    /// Numbers as numbers (negative: `int`, else `uint64`), booleans as `bool`, text as text;
    /// lists, structures and nulls as their JSON text.
    static func format(of sample: JSON) -> Format {
        switch sample {
        case .bool: .bool
        case .int(let value): value < 0 ? .int : .uint64
        case .uint: .uint64
        case .double: .float
        default: .string
        }
    }

    static func rule(_ path: AttributePath, sample: JSON) -> CharacteristicRule {
        let format = format(of: sample)
        return CharacteristicRule(uuid(cluster: path.cluster, attribute: path.attribute), [(path.cluster, path.attribute)], read: { view in
            let json = view.node.attributes[path] ?? .null
            switch (format, json) {
            case (.bool, .bool(let value)): return .bool(value)
            case (.int, .int(let value)): return .int(value)
            case (.uint64, .int(let value)) where value >= 0: return .uint(UInt64(value))
            case (.uint64, .uint(let value)): return .uint(value)
            case (_, .null): return nil
            case (.float, _): return json.double.map { .float(MatterUnits.single($0)) }
            case (.string, .string(let text)): return .string(String(text.prefix(256)))
            case (.string, _): return .string(String(json.text.prefix(256)))
            default: return nil
            }
        }, present: { _ in true })
    }

    private static func hex(_ value: UInt32, _ width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
