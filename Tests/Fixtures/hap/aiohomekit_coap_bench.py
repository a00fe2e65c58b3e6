#!/usr/bin/env python3
"""Benchmarks aiohomekit 4.0.1's HAP-over-CoAP controller (Home Assistant's, for Thread
accessories) against coap_peer.py, without mDNS.

Run it with the venv that scripts/setup makes:
  .venv/bin/python Tests/Fixtures/hap/aiohomekit_coap_bench.py --host ::1 --port P \
      --pincode 031-45-154 --iterations N --iid I

It pairs once (pair-setup on /1 through CoAPHomeKitConnection.do_pair_setup and
do_pair_setup_finish), then measures, N times each:
  - pair-verify: a fresh CoAP context and session each time (do_pair_verify), closed after;
  - read round trip: one encrypted read PDU of characteristic I (read_characteristics);
  - write round trip: one write PDU of the same characteristic, alternating true/false
    (write_characteristics).
It prints one JSON object on stdout, in the shape aiohomekit_bench.py prints:
  {"pair_setup_ms": x, "iterations": N, "pair_verify_ms": {"p50": .., "p99": ..}, "read_ms": {...}, "write_ms": {...}}
"""

import argparse
import asyncio
import json
import logging
import sys
import time

from aiohomekit.controller.coap.connection import CoAPHomeKitConnection
from aiohomekit.exceptions import AuthenticationError

from aiohomekit_bench import summary  # the same percentiles as the HAP-over-IP figures (this folder is on sys.path)

TIMEOUT = 20


async def pair(host, port, pincode):
    """A timed pair-setup. aiohomekit pads A and S where the peer (as Apple's HomeKitADK) does
    not, so about 2 in 256 are refused (docs/hap.md, "SRP"); such a one is tried again."""
    for attempt in range(3):
        connection = CoAPHomeKitConnection(None, host, port)
        started = time.perf_counter()
        try:
            async with asyncio.timeout(TIMEOUT):
                salt, public_key = await connection.do_pair_setup(False)
                pairing = await connection.do_pair_setup_finish(pincode, salt, public_key)
            return pairing, (time.perf_counter() - started) * 1000
        except AuthenticationError:
            if attempt == 2:
                raise
            print("pair-setup refused (aiohomekit's SRP padding); again", file=sys.stderr)


async def verify_once(host, port, pairing):
    connection = CoAPHomeKitConnection(None, host, port)
    started = time.perf_counter()
    async with asyncio.timeout(TIMEOUT):
        await connection.do_pair_verify(pairing)
    elapsed = (time.perf_counter() - started) * 1000
    await connection.enc_ctx.coap_ctx.shutdown()
    return elapsed


async def bench(arguments):
    pairing, pair_setup_ms = await pair(arguments.host, arguments.port, arguments.pincode)
    verify_ms = [await verify_once(arguments.host, arguments.port, pairing) for _ in range(arguments.iterations)]

    connection = CoAPHomeKitConnection(None, arguments.host, arguments.port)
    async with asyncio.timeout(TIMEOUT):
        await connection.connect(pairing)  # pair-verify and the database, which reads and writes need
    key = (1, arguments.iid)
    try:
        await connection.read_characteristics([key])  # warm-up
        read_ms = []
        for _ in range(arguments.iterations):
            started = time.perf_counter()
            result = await connection.read_characteristics([key])
            read_ms.append((time.perf_counter() - started) * 1000)
            if "value" not in result.get(key, {}):
                raise SystemExit(f"read failed: {result}")
        write_ms = []
        for index in range(arguments.iterations):
            started = time.perf_counter()
            result = await connection.write_characteristics([(1, arguments.iid, index % 2 == 0)])
            write_ms.append((time.perf_counter() - started) * 1000)
            if result:
                raise SystemExit(f"write failed: {result}")
    finally:
        await connection.enc_ctx.coap_ctx.shutdown()

    return {
        "pair_setup_ms": round(pair_setup_ms, 3),
        "iterations": arguments.iterations,
        "pair_verify_ms": summary(verify_ms),
        "read_ms": summary(read_ms),
        "write_ms": summary(write_ms),
    }


def main():
    parser = argparse.ArgumentParser(description="Benchmark aiohomekit 4.0.1's CoAP controller against coap_peer.py, without mDNS.")
    parser.add_argument("--host", default="::1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pincode", default="031-45-154")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--iid", type=int, required=True, help="a readable and writable bool characteristic of aid 1")
    parser.add_argument("--verbose", action="store_true")
    arguments = parser.parse_args()
    if arguments.iterations < 1:
        parser.error("--iterations must be at least 1")
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if arguments.verbose else logging.WARNING)
    print(json.dumps(asyncio.run(bench(arguments))), flush=True)


if __name__ == "__main__":
    main()
