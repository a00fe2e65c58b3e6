"""zoo_server.py: the real Matter Server (python-matter-server 8.1.2, the CHIP SDK's controller) for the tests.

Starts `matter-server` on 127.0.0.1 with its storage in a folder of the test's own, imports real
devices' node dumps (Home Assistant's Matter fixtures, zoo/nodes/) with the server's own
`import_test_node`, and prints one JSON line when ready (the server logs at debug level to
STORAGE/server.log: the commands and writes it takes for test nodes are there):

    {"ready": true, "url": "ws://127.0.0.1:PORT/ws", "nodes": {"eve_energy_plug": 900000, ...}}

Then it takes commands on stdin, one per line, and answers each with one JSON line:

    stop                 the server is stopped (SIGTERM); answers {"stopped": true}
    start                the server is started again and the same dumps imported again (test
                         nodes live in the server's memory only); answers as the ready line
    nodes                {"nodes": [<get_nodes result>]}: the server's own view, attribute values
                         as it holds them
    quit                 stops everything and exits

Run with the Matter venv's python (scripts/setup --matter makes .venv-matter).
"""

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import aiohttp
from matter_server.common.models import MatterNodeData

HERE = Path(__file__).resolve().parent
NODE_FIELDS = {field.name for field in fields(MatterNodeData)}


def dump_of(fixture: str) -> str:
    """A fixture as the diagnostics dump import_test_node takes: only MatterNodeData's fields
    (newer dumps carry keys 8.1.2 refuses, such as last_subscription_attempt; silabs_water_heater
    has stray attribute keys at the top level)."""
    node = json.loads((HERE / "zoo" / "nodes" / f"{fixture}.json").read_text())
    node = {key: value for key, value in node.items() if key in NODE_FIELDS}
    return json.dumps({"data": {"node": node}})


def _die_with_parent():
    """The server ends with this script, even when the script is SIGKILLed (a test that ends
    before its clean-up ran): PR_SET_PDEATHSIG."""
    import ctypes

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)


class Server:
    def __init__(self, port: int, storage: str, fixtures: list[str]):
        self.port = port
        self.storage = storage
        self.fixtures = fixtures
        self.process: subprocess.Popen | None = None
        self.url = f"ws://127.0.0.1:{port}/ws"

    async def start(self) -> dict:
        Path(self.storage).mkdir(parents=True, exist_ok=True)
        log = open(Path(self.storage) / "server.log", "ab")
        executable = Path(sys.executable).parent / "matter-server"
        self.process = subprocess.Popen(
            [str(executable), "--storage-path", self.storage, "--port", str(self.port), "--listen-address", "127.0.0.1",
             "--log-level", "debug"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"},
            preexec_fn=_die_with_parent)
        nodes = {}
        for attempt in range(300):
            if self.process.poll() is not None:
                raise SystemExit(f"matter-server exited with {self.process.returncode}; see {self.storage}/server.log")
            try:
                async with aiohttp.ClientSession() as session:
                    async with session.ws_connect(self.url, max_msg_size=0) as ws:
                        await ws.receive_json()
                        for number, fixture in enumerate(self.fixtures):
                            before = await self.command(ws, "get_nodes")
                            await self.command(ws, "import_test_node", {"dump": dump_of(fixture)})
                            after = await self.command(ws, "get_nodes")
                            new = {node["node_id"] for node in after} - {node["node_id"] for node in before}
                            nodes[fixture] = min(new) if new else None
                        return {"ready": True, "url": self.url, "nodes": nodes}
            except (aiohttp.ClientError, ConnectionError):
                await asyncio.sleep(0.1)
        raise SystemExit("matter-server did not answer within 30 s")

    async def command(self, ws, name: str, args: dict | None = None):
        message_id = os.urandom(4).hex()
        await ws.send_json({"message_id": message_id, "command": name, "args": args or {}})
        while True:
            message = await ws.receive_json()
            if message.get("message_id") != message_id:
                continue
            if "error_code" in message:
                raise RuntimeError(f"{name}: error {message['error_code']}: {message.get('details')}")
            return message.get("result")

    async def nodes(self) -> list:
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(self.url, max_msg_size=0) as ws:
                await ws.receive_json()
                return await self.command(ws, "get_nodes")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--storage", required=True)
    parser.add_argument("fixtures", nargs="*")
    options = parser.parse_args()
    if not Path("/data").is_dir():
        # The CHIP SDK keeps /data/chip_factory.ini and the server dies at start without /data.
        try:
            Path("/data").mkdir()
        except OSError as error:
            raise SystemExit(f"matter-server needs the folder /data (the CHIP SDK writes chip_factory.ini there): {error}; sudo mkdir /data")
    server = Server(options.port, options.storage, options.fixtures)
    try:
        print(json.dumps(await server.start()), flush=True)
        loop = asyncio.get_running_loop()
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            command = line.strip()
            if not line or command == "quit":
                break
            if command == "stop":
                server.stop()
                print(json.dumps({"stopped": True}), flush=True)
            elif command == "start":
                print(json.dumps(await server.start()), flush=True)
            elif command == "nodes":
                print(json.dumps({"nodes": await server.nodes()}), flush=True)
            else:
                print(json.dumps({"error": f"unknown command {command!r}"}), flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    asyncio.run(main())
