#!/usr/bin/env python3
"""Two HomeKit accessories announced by mDNS (python-zeroconf), for `homegate discover`'s tests.

Run it ONLY inside a network namespace the test made (never on the machine's real interfaces):
`ip netns exec NS .venv/bin/python Tests/Fixtures/hap/mdns_advertiser.py [--bridge-port P]
[--lightbulb-port P] [--coap-port P] [--address 127.0.0.1]`. Tests/EndToEndTests/DiscoverTests.swift
drives it.

It registers two `_hap._tcp.local.` services on 127.0.0.1 (the namespace's `lo`, which needs a
multicast route: `ip route add 224.0.0.0/4 dev lo`); nothing listens on their ports, they are
only advertised:
  "HomeGate Test Bridge"  host homegate-test-bridge.local.  unpaired bridge  (sf=1, ci=2)
  "Küche Lamp"            host homegate-test-lamp.local.    paired lightbulb (sf=0, ci=5)
The second name is not ASCII on purpose: DNS labels carry UTF-8. With --coap-port a third, a
Thread accessory as a border router announces it, is registered as `_hap._udp.local.` (HAP over
CoAP), with the IPv6 address ::1 beside the IPv4 one:
  "Eve Energy 20EBU"      host homegate-test-eve.local.     unpaired outlet  (sf=1, ci=7)

Standard output carries only JSON lines, one object each, flushed:
  {"event": "ready", "services": [{"name": ..., "port": P, "id": ..., "host": ...}, ...]}
  {"event": "stopped"}
It runs until SIGTERM or SIGINT, then unregisters the services (goodbye packets) and exits.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import sys
import threading

from zeroconf import IPVersion, ServiceInfo, Zeroconf

HAP_TYPE = "_hap._tcp.local."
COAP_TYPE = "_hap._udp.local."


def emit(event: dict) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def services(address: str, bridge_port: int, lightbulb_port: int) -> list[ServiceInfo]:
    packed = socket.inet_aton(address)
    bridge = ServiceInfo(
        HAP_TYPE,
        f"HomeGate Test Bridge.{HAP_TYPE}",
        addresses=[packed],
        port=bridge_port,
        server="homegate-test-bridge.local.",
        properties={
            "c#": "3", "ff": "0", "id": "AA:BB:CC:00:11:22", "md": "HG Bridge 1",
            "pv": "1.1", "s#": "1", "sf": "1", "ci": "2", "sh": "Ab3dEQ==",
        },
    )
    lightbulb = ServiceInfo(
        HAP_TYPE,
        f"Küche Lamp.{HAP_TYPE}",
        addresses=[packed],
        port=lightbulb_port,
        server="homegate-test-lamp.local.",
        properties={
            "c#": "12", "ff": "1", "id": "DE:AD:BE:EF:00:05", "md": "Lamp Model 5",
            "pv": "1.1", "s#": "1", "sf": "0", "ci": "5", "sh": "9x8fQw==",
        },
    )
    return [bridge, lightbulb]


def thread_accessory(address: str, port: int) -> ServiceInfo:
    return ServiceInfo(
        COAP_TYPE,
        f"Eve Energy 20EBU.{COAP_TYPE}",
        addresses=[socket.inet_aton(address), socket.inet_pton(socket.AF_INET6, "::1")],
        port=port,
        server="homegate-test-eve.local.",
        properties={
            "c#": "4", "ff": "2", "id": "E1:E2:E3:E4:E5:E6", "md": "Eve Energy 20EBU",
            "pv": "1.2", "s#": "1", "sf": "1", "ci": "7", "sh": "cW9xZQ==",
        },
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--bridge-port", type=int, default=51826)
    parser.add_argument("--lightbulb-port", type=int, default=51827)
    parser.add_argument("--coap-port", type=int, default=None)
    arguments = parser.parse_args()

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    zeroconf = Zeroconf(interfaces=[arguments.address], ip_version=IPVersion.V4Only)
    infos = services(arguments.address, arguments.bridge_port, arguments.lightbulb_port)
    if arguments.coap_port is not None:
        infos.append(thread_accessory(arguments.address, arguments.coap_port))
    try:
        for info in infos:
            zeroconf.register_service(info)
        emit({
            "event": "ready",
            "services": [
                {"name": info.name.removesuffix("." + info.type), "port": info.port,
                 "id": info.properties[b"id"].decode(), "host": info.server}
                for info in infos
            ],
        })
        while not stop.wait(0.2):
            pass
        zeroconf.unregister_all_services()
    finally:
        zeroconf.close()
    emit({"event": "stopped"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
