#!/usr/bin/env python3
"""Benchmarks aiohomekit 4.0.1 (Home Assistant's HAP controller) against hap_peer.py, without mDNS.

Run it with the venv that scripts/setup makes:
  .venv/bin/python Tests/Fixtures/hap/aiohomekit_bench.py --host 127.0.0.1 --port P \
      --pincode 031-45-154 --iterations N --pairing-file FILE

It pairs (pair-setup with a UUID as the controller's pairing id, as HAP-python needs; retried up to
5 times on an authentication error, HAP-python's SRP padding quirk hits ~1 pair-setup in 85) and
saves the pairing to FILE, or reuses the pairing already in FILE (pair_setup_ms is then null).
Then it measures, N times each:
  - connect + pair-verify: a fresh TCP connection and secure session each time;
  - read round trip: GET /characteristics of the Desk Lamp's On through IpPairing.get_characteristics;
  - write round trip: PUT /characteristics of the same On, alternating true/false, through
    IpPairing.put_characteristics.
It prints one JSON object on stdout:
  {"pair_setup_ms": x, "pair_setup_attempts": k, "iterations": N,
   "pair_verify_ms": {"p50": .., "p99": ..}, "read_ms": {...}, "write_ms": {...}}

How aiohomekit is driven without zeroconf: pair-setup runs perform_pair_setup_part1/part2 (the
state machines IpDiscovery uses) over a plain HomeKitConnection(None, [host], port); the pairing
data gets AccessoryIP/AccessoryIPs/AccessoryPort/Connection as IpDiscovery adds them; connect +
pair-verify is SecureHomeKitConnection(None, pairing data).ensure_connection(); reads and writes go
through IpPairing(Controller(), pairing data), a Controller that is never started (so it never
opens zeroconf) and only lends IpPairing its characteristic cache.
"""

import argparse
import asyncio
import json
import logging
import math
import os
import sys
import time
import uuid

from aiohomekit.controller import Controller
from aiohomekit.controller.ip.connection import HomeKitConnection, SecureHomeKitConnection
from aiohomekit.controller.ip.pairing import IpPairing
from aiohomekit.exceptions import AuthenticationError
from aiohomekit.model.characteristics import CharacteristicsTypes
from aiohomekit.model.services import ServicesTypes
from aiohomekit.protocol import perform_pair_setup_part1, perform_pair_setup_part2
from aiohomekit.uuid import normalize_uuid

logger = logging.getLogger("aiohomekit_bench")

PAIR_SETUP_ATTEMPTS = 5
CONNECT_TIMEOUT = 10


async def run_state_machine(connection, state_machine):
    """Feeds a pair-setup state machine with the accessory's answers; returns its result."""
    request, expected = state_machine.send(None)
    while True:
        response = await connection.post_tlv("/pair-setup", body=request, expected=expected)
        try:
            request, expected = state_machine.send(response)
        except StopIteration as result:
            return result.value


async def pair_setup_once(host, port, pincode):
    connection = HomeKitConnection(None, [host], port)
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            await connection.ensure_connection()
        salt, public_key = await run_state_machine(connection, perform_pair_setup_part1(False))
        # HAP-python parses the controller's pairing id as a UUID.
        pairing = await run_state_machine(
            connection, perform_pair_setup_part2(pincode, str(uuid.uuid4()), salt, public_key)
        )
    finally:
        await connection.close()
    pairing["AccessoryIP"] = host
    pairing["AccessoryIPs"] = [host]
    pairing["AccessoryPort"] = port
    pairing["Connection"] = "IP"
    return pairing


async def pair_setup(host, port, pincode):
    """Pairs; returns (pairing data, milliseconds of the successful attempt, attempts)."""
    for attempt in range(1, PAIR_SETUP_ATTEMPTS + 1):
        started = time.perf_counter()
        try:
            pairing = await pair_setup_once(host, port, pincode)
        except AuthenticationError as error:
            logger.warning("pair-setup attempt %d failed with an authentication error (%s); retrying", attempt, error)
            continue
        return pairing, (time.perf_counter() - started) * 1000, attempt
    raise SystemExit(f"pair-setup failed {PAIR_SETUP_ATTEMPTS} times with an authentication error")


async def connect_and_verify(pairing):
    """Milliseconds for a fresh TCP connection plus pair-verify."""
    connection = SecureHomeKitConnection(None, pairing)
    started = time.perf_counter()
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            await connection.ensure_connection()
        elapsed = (time.perf_counter() - started) * 1000
        if not connection.is_connected:
            raise SystemExit("pair-verify did not give a secure connection")
    finally:
        await connection.close()
    return elapsed


def find_lamp_on(accessories):
    """(aid, iid) of the On characteristic of the Lightbulb service named or on "Desk Lamp"."""
    lightbulb = normalize_uuid(ServicesTypes.LIGHTBULB)
    on = normalize_uuid(CharacteristicsTypes.ON)
    for accessory in accessories:
        for service in accessory["services"]:
            if service["type"] != lightbulb:
                continue
            for characteristic in service["characteristics"]:
                if characteristic["type"] == on:
                    return accessory["aid"], characteristic["iid"]
    raise SystemExit("the peer has no Lightbulb with an On characteristic")


def summary(samples):
    ordered = sorted(samples)

    def percentile(fraction):
        # nearest rank
        rank = max(1, math.ceil(fraction * len(ordered)))
        return round(ordered[rank - 1], 3)

    return {"p50": percentile(0.50), "p99": percentile(0.99)}


async def bench(arguments):
    pair_setup_ms = None
    attempts = 0
    if os.path.exists(arguments.pairing_file):
        with open(arguments.pairing_file, encoding="utf-8") as file:
            pairing = json.load(file)
    else:
        pairing, pair_setup_ms, attempts = await pair_setup(arguments.host, arguments.port, arguments.pincode)
        with open(arguments.pairing_file, "w", encoding="utf-8") as file:
            json.dump(pairing, file, indent=2)
    # The host and port of this run win over the ones saved with the pairing.
    pairing["AccessoryIP"] = arguments.host
    pairing["AccessoryIPs"] = [arguments.host]
    pairing["AccessoryPort"] = arguments.port

    verify_ms = [await connect_and_verify(pairing) for _ in range(arguments.iterations)]

    paired = IpPairing(Controller(), pairing)
    try:
        accessories = await paired.list_accessories_and_characteristics()
        aid, iid = find_lamp_on(accessories)
        await paired.get_characteristics([(aid, iid)])  # warm-up

        read_ms = []
        for _ in range(arguments.iterations):
            started = time.perf_counter()
            result = await paired.get_characteristics([(aid, iid)])
            read_ms.append((time.perf_counter() - started) * 1000)
            if "value" not in result.get((aid, iid), {}):
                raise SystemExit(f"read failed: {result}")

        write_ms = []
        for index in range(arguments.iterations):
            started = time.perf_counter()
            result = await paired.put_characteristics([(aid, iid, index % 2 == 0)])
            write_ms.append((time.perf_counter() - started) * 1000)
            if result:
                raise SystemExit(f"write failed: {result}")
    finally:
        await paired.close()

    return {
        "pair_setup_ms": None if pair_setup_ms is None else round(pair_setup_ms, 3),
        "pair_setup_attempts": attempts,
        "iterations": arguments.iterations,
        "pair_verify_ms": summary(verify_ms),
        "read_ms": summary(read_ms),
        "write_ms": summary(write_ms),
    }


def main():
    parser = argparse.ArgumentParser(description="Benchmark aiohomekit 4.0.1 against a HAP accessory, without mDNS.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pincode", default="031-45-154")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--pairing-file", required=True, help="where the pairing is saved, or reused from if it exists")
    parser.add_argument("--verbose", action="store_true")
    arguments = parser.parse_args()
    if arguments.iterations < 1:
        parser.error("--iterations must be at least 1")
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if arguments.verbose else logging.WARNING)
    result = asyncio.run(bench(arguments))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
