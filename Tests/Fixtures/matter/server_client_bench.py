"""The floor of the Matter bench: the Matter Server's own Python client (matter_server.client,
as Home Assistant uses it) sending On and Off to a node in turn, each awaited, and timing each
command from send to the server's answer (the node has confirmed it).

    server_client_bench.py --url ws://127.0.0.1:PORT/ws --node 1 --iterations 500 [--warm-up 20]

Prints one JSON line: {"count": N, "p50": us, "p90": us, "p99": us, "samples": [us, ...]}. Run with .venv-matter's python.
"""

import argparse
import asyncio
import json
import time

import aiohttp
from chip.clusters import Objects as clusters
from matter_server.client import MatterClient


def percentile(sorted_samples, fraction):
    index = min(len(sorted_samples) - 1, max(0, int(-(-len(sorted_samples) * fraction // 1)) - 1))
    return round(sorted_samples[index] * 10) / 10


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--node", type=int, required=True)
    parser.add_argument("--endpoint", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--warm-up", type=int, default=20)
    options = parser.parse_args()
    async with aiohttp.ClientSession() as session:
        client = MatterClient(options.url, session)
        await client.connect()
        ready = asyncio.Event()
        listening = asyncio.create_task(client.start_listening(ready))
        await ready.wait()
        samples = []
        for index in range(options.warm_up + options.iterations):
            command = clusters.OnOff.Commands.Off() if index % 2 else clusters.OnOff.Commands.On()
            start = time.perf_counter()
            await client.send_device_command(options.node, options.endpoint, command)
            elapsed = (time.perf_counter() - start) * 1_000_000
            if index >= options.warm_up:
                samples.append(elapsed)
        await client.disconnect()
        listening.cancel()
    samples.sort()
    print(json.dumps({"count": len(samples), "p50": percentile(samples, 0.5), "p90": percentile(samples, 0.9), "p99": percentile(samples, 0.99),
                      "samples": [round(sample, 1) for sample in samples]}))


if __name__ == "__main__":
    asyncio.run(main())
