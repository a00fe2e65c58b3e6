"""Checks the values HomeGate publishes for Matter accessories against the Matter Server's own
attribute values, converted by the mapping table of docs/matter.md, written out here again on
its own (not HomeGate's code): the independent check of the table.

    check_values.py --server ws://127.0.0.1:PORT/ws --broker-port N --base hgtest

Reads the server's nodes (get_nodes), the gateway's retained topics (mosquitto_sub: `$layout`
and every value), and for every characteristic of a Matter accessory that the table maps from one
attribute, compares. Prints one JSON line {"checked": N, "mismatches": [...]} and exits 1 on a
mismatch or when nothing was checked. Run with .venv-matter's python.
"""

import argparse
import asyncio
import json
import math
import subprocess

import aiohttp


def percent_of_254(value):
    return round(min(max(value, 0), 254) * 100 / 254)


# (service type, characteristic type) -> (cluster, attribute, conversion of the server's value)
TABLE = {
    ("lightbulb", "on"): (6, 0, lambda v: v),
    ("outlet", "on"): (6, 0, lambda v: v),
    ("switch", "on"): (6, 0, lambda v: v),
    ("lightbulb", "brightness"): (8, 0, percent_of_254),
    ("lightbulb", "hue"): (0x300, 0, lambda v: round(min(max(v, 0), 254) * 360 / 254)),
    ("lightbulb", "saturation"): (0x300, 1, percent_of_254),
    ("lightbulb", "color-temperature"): (0x300, 7, lambda v: v),
    ("temperature-sensor", "current-temperature"): (0x402, 0, lambda v: v / 100),
    ("thermostat", "current-temperature"): (0x201, 0, lambda v: v / 100),
    ("humidity-sensor", "current-relative-humidity"): (0x405, 0, lambda v: v / 100),
    ("light-sensor", "current-ambient-light-level"): (0x400, 0, lambda v: 0.0001 if v < 1 else 10 ** ((v - 1) / 10000)),
    ("occupancy-sensor", "occupancy-detected"): (0x406, 0, lambda v: v & 1),
    ("contact-sensor", "contact-sensor-state"): (0x45, 0, lambda v: 0 if v else 1),
    ("leak-sensor", "leak-detected"): (0x45, 0, lambda v: 1 if v else 0),
    ("smoke-sensor", "smoke-detected"): (0x5C, 1, lambda v: 1 if v > 0 else 0),
    ("carbon-monoxide-sensor", "carbon-monoxide-detected"): (0x5C, 2, lambda v: 1 if v > 0 else 0),
    ("air-quality-sensor", "air-quality"): (0x5B, 0, lambda v: min(5, max(0, v))),
    ("battery-service", "battery-level"): (0x2F, 0x0C, lambda v: round(v / 2)),
    ("battery-service", "status-low-battery"): (0x2F, 0x0E, lambda v: 1 if v > 0 else 0),
    ("window-covering", "current-position"): (0x102, 0x0E, lambda v: 100 - round(v / 100)),
    ("window-covering", "target-position"): (0x102, 0x0B, lambda v: 100 - round(v / 100)),
    ("lock-mechanism", "lock-current-state"): (0x101, 0, lambda v: {0: 2, 1: 1, 2: 0, 3: 0}.get(v, 3)),
    ("fanv2", "active"): (0x202, 0, lambda v: 0 if v == 0 else 1),
    ("smoke-sensor", "status-fault"): (0x5C, 6, lambda v: 1 if v else 0),
    ("valve", "in-use"): (0x81, 3, lambda v: 1 if v == 1 else 0),
    ("valve", "status-fault"): (0x81, 9, lambda v: 0 if v == 0 else 1),
}


def same(published, expected):
    if isinstance(expected, bool) or isinstance(published, bool):
        return published == expected
    if isinstance(expected, (int, float)) and isinstance(published, (int, float)):
        tolerance = max(abs(expected) * 1e-3, 1e-6) if isinstance(expected, float) and not float(expected).is_integer() else 0
        return math.isclose(published, expected, abs_tol=tolerance) if tolerance else published == expected
    return published == expected


def retained(port, base):
    output = subprocess.run(["mosquitto_sub", "-p", str(port), "-t", f"{base}/#", "-v", "-W", "3", "--retained-only"],
                            capture_output=True, text=True).stdout
    topics = {}
    for line in output.splitlines():
        topic, _, payload = line.partition(" ")
        topics[topic] = payload
    return topics


def assemble(topics, base):
    index = json.loads(topics[f"{base}/$layout"])
    accessories = []
    for home in index["homes"]:
        part = json.loads(topics[home["layout"]])
        for room in part["rooms"]:
            for layout in room["layout"]:
                accessories += json.loads(topics[layout])["accessories"]
    return accessories


async def nodes(url):
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url, max_msg_size=0) as ws:
            await ws.receive_json()
            await ws.send_json({"message_id": "nodes", "command": "get_nodes"})
            while True:
                message = await ws.receive_json()
                if message.get("message_id") == "nodes":
                    return {node["node_id"]: node for node in message["result"]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--broker-port", type=int, required=True)
    parser.add_argument("--base", default="homegate")
    options = parser.parse_args()
    server_nodes = asyncio.run(nodes(options.server))
    topics = retained(options.broker_port, options.base)
    checked, mismatches = 0, []
    for accessory in assemble(topics, options.base):
        parts = accessory["id"].split("-")
        if parts[0] != "matter":
            continue
        node = server_nodes.get(int(parts[2]))
        if node is None:
            mismatches.append(f"{accessory['id']}: the server has no node {parts[2]}")
            continue
        for service in accessory.get("services", []):
            for characteristic in service.get("characteristics", []):
                entry = TABLE.get((service["type"], characteristic["type"]))
                topic = characteristic.get("topic")
                if entry is None or topic not in topics:
                    continue
                endpoint = (characteristic["iid"] >> 16) - 1
                cluster, attribute, convert = entry
                raw = node["attributes"].get(f"{endpoint}/{cluster}/{attribute}")
                if raw is None:
                    continue
                expected = convert(raw)
                published = json.loads(topics[topic])
                checked += 1
                if not same(published, expected):
                    mismatches.append(f"{topic}: published {published}, the server's {endpoint}/{cluster}/{attribute} = {raw} -> {expected}")
    print(json.dumps({"checked": checked, "mismatches": mismatches}))
    raise SystemExit(1 if mismatches or checked == 0 else 0)


if __name__ == "__main__":
    main()
