// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "HomeGate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "homegate", targets: ["homegate"]),
        .library(name: "MQTT", targets: ["MQTT"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", exact: "6.2.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "4.5.2"),
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", exact: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
    ],
    targets: [
        // libmosquitto (Debian: libmosquitto-dev). Only the MQTT module imports it.
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        // libcrypto's big numbers (Debian: libssl-dev), for SRP-6a's 3072-bit exponentiations.
        // Only the HAP module imports it.
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // The values both sides of the gateway share: HAP's status table, the one error of the
        // characteristic path (a status and a message), the one JSON model, the topic grammar,
        // HomeKit's TLV8. A leaf: imports nothing.
        .target(name: "Wire"),
        // Time as the rest uses it: the one deadline race, the one wake-up for async loops, the
        // one backoff, Duration as numbers. A leaf: the standard library and Synchronization only.
        .target(name: "Timing"),
        // A SwiftNIO event loop as a task executor: a client whose requests and answers run on
        // its channel's loop makes round trips without a thread switch (HAP over IP, Matter).
        .target(
            name: "LoopExecutor",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")]
        ),
        // The HomeKit Accessory Protocol, controller side: TLV8, SRP-6a, pair-setup and
        // pair-verify, the encrypted session, HTTP and EVENT framing. Knows nothing of MQTT or homes.
        // Device connections are SwiftNIO channels on one shared event loop group.
        .target(
            name: "HAP",
            dependencies: [
                "CLibCrypto",
                "LoopExecutor",
                "Timing",
                "Wire",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Paired HAP accessories and bridges as an AccessoryDriver: sessions, events, reconnects.
        .target(
            name: "HAPDriver",
            dependencies: ["HAP", "Accessories", "HomeModel", "Timing", "Wire", .product(name: "Logging", package: "swift-log")]
        ),
        // A client of the Matter Server's WebSocket API (python-matter-server, or the matter.js
        // server with its API): commands, results, events, onboarding codes. Knows nothing of homes.
        .target(
            name: "Matter",
            dependencies: [
                "LoopExecutor", "Wire",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Matter nodes as HomeKit accessories (the mapping table) and as an AccessoryDriver:
        // values, sets as commands or attribute writes, events, commissioning, reconnects.
        .target(
            name: "MatterDriver",
            dependencies: ["Matter", "Accessories", "HomeModel", "Timing", "Wire", .product(name: "Logging", package: "swift-log")]
        ),
        // The only Swift face of libmosquitto.
        .target(
            name: "MQTT",
            dependencies: [
                "CMosquitto",
                "Timing",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // HomeKit's home tree as values, the HAP catalog, naming rules, values, topics.
        .target(
            name: "HomeModel",
            dependencies: ["Wire"],
            exclude: ["Catalog/hap-catalog.json"],
            plugins: ["EmbedCatalog"]
        ),
        // Persistence in SQLite through GRDB: layout, accessories' structure, retained-topic ledger.
        .target(
            name: "HomeStore",
            dependencies: ["HomeModel", "Wire", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Crypto", package: "swift-crypto")]
        ),
        // The AccessoryDriver protocol and the simulator (HomeGate's HomeKit Accessory Simulator).
        .target(name: "Accessories", dependencies: ["HomeModel", "Wire"]),
        // The engine: the MQTT contract (values, writes and acknowledgements, reachability,
        // layout, events, retained-topic hygiene, simulator controls).
        .target(
            name: "Gateway",
            dependencies: [
                "MQTT", "HomeModel", "HomeStore", "Accessories", "Timing", "Wire",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // The gateway's HTTP server (hummingbird): Prometheus metrics and /health.
        .target(
            name: "WebServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The web page (`ui:`): its HTML, CSS and JavaScript (Assets/, built into the binary), logins
        // against the users and Mosquitto password files, and its own MQTT connection that feeds
        // the page over a WebSocket and publishes its sets and requests, role checked.
        .target(
            name: "WebUI",
            dependencies: [
                "MQTT", "HomeGateConfig", "Timing", "WebServer", "Wire",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Assets"],
            plugins: ["EmbedAssets"]
        ),
        // Embeds the web page's assets into WebUI at build time.
        .plugin(name: "EmbedAssets", capability: .buildTool(), dependencies: ["asset-embed"]),
        .executableTarget(name: "asset-embed", path: "Tools/asset-embed"),
        // Embeds the HAP catalog file into HomeModel at build time.
        .plugin(name: "EmbedCatalog", capability: .buildTool(), dependencies: ["catalog-embed"]),
        .executableTarget(name: "catalog-embed", path: "Tools/catalog-embed"),
        // The YAML configuration file: loading, validation, error messages.
        .target(
            name: "HomeGateConfig",
            dependencies: [
                "MQTT",
                "Wire",
                "HomeModel",
                "Accessories",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The command-line interface: `homegate run`, ...
        .executableTarget(
            name: "homegate",
            dependencies: [
                "MQTT",
                "HomeGateConfig",
                "HomeModel",
                "Accessories",
                "HomeStore",
                "Gateway",
                "HAP",
                "HAPDriver",
                "Matter",
                "MatterDriver",
                "Timing",
                "Wire",
                "WebServer",
                "WebUI",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The benchmark harness (scripts/bench): broker echo baseline, set round trips, the
        // gateway's own time per set, fan-out, and homes of growing size.
        .executableTarget(
            name: "homegate-bench",
            dependencies: ["MQTT", "HAP", "Harness", "Timing", "Matter", .product(name: "Logging", package: "swift-log")],
            path: "Sources/homegate-bench"
        ),
        // The long run (scripts/soak): the gateway under mixed load, memory, descriptors, threads
        // and acknowledgement latency over time, every command acknowledged exactly once.
        .executableTarget(
            name: "homegate-soak",
            dependencies: ["MQTT", "Harness", "Timing"],
            path: "Sources/homegate-soak"
        ),
        // What the benchmarks and the tests launch and drive: a real Mosquitto on a free port, the
        // homegate binary, HAP-python peers, child processes, a recording MQTT client.
        .target(
            name: "Harness",
            dependencies: ["MQTT", "Timing", .product(name: "Logging", package: "swift-log")]
        ),
        // Test fixtures on top of the harness: the gateway with a watcher, the layout joined, clocks.
        .target(
            name: "TestSupport",
            dependencies: ["MQTT", "Harness", "HomeModel"],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "WireTests", dependencies: ["Wire"]),
        .testTarget(name: "TimingTests", dependencies: ["Timing", "TestSupport"]),
        .testTarget(name: "MatterTests", dependencies: ["Matter", "MatterDriver", "HomeModel", "Wire", "Accessories"]),
        .testTarget(name: "HAPTests", dependencies: ["HAP", "Wire", .product(name: "Crypto", package: "swift-crypto"),
                                                    .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio")]),
        .testTarget(name: "HAPPeerTests", dependencies: ["Wire", "HAP", "HAPDriver", "Accessories", "HomeModel", "TestSupport"]),
        .testTarget(name: "MQTTTests", dependencies: ["MQTT", "TestSupport"]),
        .testTarget(name: "HomeGateConfigTests", dependencies: ["Wire", "HomeGateConfig", "MQTT", "HomeModel", "Accessories"]),
        .testTarget(name: "HomeModelTests", dependencies: ["Wire", "HomeModel"]),
        .testTarget(name: "HomeStoreTests", dependencies: ["HomeStore", "HomeModel", "Wire", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "AccessoriesTests", dependencies: ["Wire", "Accessories", "HomeModel", "TestSupport"]),
        .testTarget(name: "GatewayTests", dependencies: ["Wire", "Gateway", "HAP", "HAPDriver", "HomeModel", "HomeStore", "Accessories", "MQTT", "TestSupport",
                                                        .product(name: "Prometheus", package: "swift-prometheus"),
                                                        .product(name: "Metrics", package: "swift-metrics")]),
        .testTarget(name: "WebUITests", dependencies: ["WebUI", "HomeGateConfig", "MQTT", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(name: "WebServerTests", dependencies: ["WebServer", "TestSupport", .product(name: "Prometheus", package: "swift-prometheus"),
                                                       .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")]),
        .testTarget(name: "EndToEndTests", dependencies: ["Wire", "homegate", "MQTT", "TestSupport", "HomeStore", "HomeModel", "Matter",
                                                           .product(name: "Logging", package: "swift-log")]),
    ],
    swiftLanguageModes: [.v6]
)

// libFuzzer targets for parsers that need the package's modules and their dependencies (the YAML
// configuration; pair-setup and pair-verify): only when HOMEGATE_FUZZ=1, which scripts/fuzz sets
// for its own build in .build-fuzz (every module instrumented there by its -Xswiftc flags; these
// two link libFuzzer). Every other build sees the package as without these lines.
if Context.environment["HOMEGATE_FUZZ"] == "1" {
    let libFuzzer: [LinkerSetting] = [.unsafeFlags(["-sanitize=fuzzer,address"])]
    package.targets += [
        .executableTarget(name: "fuzz-config", dependencies: ["HomeGateConfig"], path: "Fuzz/Targets/config", linkerSettings: libFuzzer),
        .executableTarget(name: "fuzz-pairing", dependencies: ["HAP", "Wire", .product(name: "Crypto", package: "swift-crypto")],
                          path: "Fuzz/Targets/pairing", linkerSettings: libFuzzer),
    ]
}
