#!/usr/bin/env python3
"""Many HAP accessories in one process, for HomeGate's many-devices test and benchmark.

Run it with the venv that scripts/setup makes: `.venv/bin/python Tests/Fixtures/hap/many_peers.py
--count N [--pincode 031-45-154] [--state-dir DIR] [--name-prefix Lamp] [--verbose]`.
Sources/Harness/ManyPeers.swift drives it.

N HAP-python 5.0.0 `AccessoryDriver`s share one asyncio loop (HAP-python takes a `loop`), each a
HAP accessory server of its own on 127.0.0.1: its own port (an ephemeral one the kernel picks,
so no port is guessed and raced for), its own device id, keys and pairings (its own state file).
Each serves one standalone accessory (aid 1), "<prefix> NNN", a Lightbulb with On and Brightness
(both pr/pw/ev). mDNS is off, as in hap_peer.py. One process of ~40 MB instead of N.

Standard output carries only JSON lines, one object each, flushed:
  {"event": "peer", "index": I, "port": P, "id": "AA:BB:CC:DD:EE:FF", "name": "Lamp 007"}   (one per peer)
  {"event": "ready", "count": N}                                   (after every peer listens)
  {"event": "write", "index": I, "characteristic": "On", "value": true}   (a client wrote a value)
  {"event": "paired", "index": I, "controller": "<pairing id>", "admin": true}
  {"event": "unpaired", "index": I, "controller": "<pairing id>"}
  {"event": "done", "command": "..."}                              (after each control line)
  {"event": "error", "line": "...", "message": "..."}              (a control line it could not do)
  {"event": "stopped"}

Control lines on standard input, one JSON object each:
  {"command": "set", "characteristic": "Brightness", "value": V}             every peer changes
                                                                            the value by itself
                                                                            (EVENTs to subscribers)
  {"command": "set", "index": I, "characteristic": "On", "value": true}     only peer I
Characteristic changes made this way are sent to subscribed controllers at once (HAP-python
would otherwise hold them for up to 0.5 s to coalesce them).

SIGTERM or SIGINT stops every peer and the process; it also stops by itself when the process
that started it is gone.
"""

import argparse
import asyncio
import json
import logging
import os
import re
import shutil
import signal
import sys
import tempfile
import threading

from pyhap import util
from pyhap.accessory import Accessory
from pyhap.accessory_driver import AccessoryDriver
from pyhap.const import CATEGORY_LIGHTBULB
from pyhap.loader import Loader

from hap_peer import SilentZeroconf, emit

logger = logging.getLogger("many_peers")


class ManyDriver(AccessoryDriver):
    """One peer's driver on the shared loop: reports pairings with its index."""

    def __init__(self, *, index, **kwargs):
        super().__init__(**kwargs)
        self.index = index
        # HAP-python's State turns port 0 into its default port (51827): listen on an ephemeral
        # port the kernel picks instead, and tell it the port once it listens.
        self.http_server._addr_port = ("127.0.0.1", 0)

    async def async_start(self):
        await super().async_start()
        self.state.port = self.port

    def pair(self, client_username_bytes, client_public, client_permissions):
        result = super().pair(client_username_bytes, client_public, client_permissions)
        permissions = client_permissions[0] if isinstance(client_permissions, (bytes, bytearray)) else client_permissions
        emit("paired", index=self.index, controller=client_username_bytes.decode("utf-8", "replace"), admin=bool(permissions & 1))
        return result

    def unpair(self, client_uuid):
        super().unpair(client_uuid)
        emit("unpaired", index=self.index, controller=str(client_uuid))

    @property
    def port(self):
        """The port the server listens on (the kernel picked it)."""
        return self.http_server.server.sockets[0].getsockname()[1]


class Lamp(Accessory):
    category = CATEGORY_LIGHTBULB

    def __init__(self, driver, name, index):
        super().__init__(driver, name)
        self.index = index
        self.set_info_service(firmware_revision="1.0.0", manufacturer="HomeGate Tests", model="Many Lamp",
                              serial_number=f"HG-MANY-{index:03d}")
        service = self.add_preload_service("Lightbulb", chars=["On", "Brightness"])
        self.characteristics = {
            "On": service.configure_char("On", value=False, setter_callback=lambda value: self._written("On", value)),
            "Brightness": service.configure_char("Brightness", value=100, setter_callback=lambda value: self._written("Brightness", value)),
        }

    def _written(self, characteristic, value):
        emit("write", index=self.index, characteristic=characteristic, value=value)

    def setup_message(self):
        # HAP-python prints the setup code and a QR code on stdout; stdout is for JSON lines only.
        logger.info("setup code %s", self.driver.state.pincode.decode())

    def change(self, characteristic, value):
        """The device changes a value by itself: subscribed controllers get an EVENT at once."""
        target = self.characteristics[characteristic]
        target.set_value(value, should_notify=False)
        self.publish(target.value, target, immediate=True)


class Peers:
    def __init__(self, arguments, loop, state_dir):
        self.loop = loop
        self.lamps = []
        self.drivers = []
        self.stopping = False
        self.failed = False
        self.watch = None
        loader = Loader()  # one copy of HAP-python's service and characteristic tables for all
        width = max(3, len(str(arguments.count - 1)))
        for index in range(arguments.count):
            driver = ManyDriver(
                index=index,
                loop=loop,
                address="127.0.0.1",
                port=0,
                persist_file=os.path.join(state_dir, f"peer-{index}.state"),
                pincode=arguments.pincode.encode(),
                loader=loader,
                async_zeroconf_instance=SilentZeroconf(),
            )
            lamp = Lamp(driver, f"{arguments.name_prefix} {index:0{width}d}", index)
            driver.add_accessory(lamp)
            self.drivers.append(driver)
            self.lamps.append(lamp)

    async def start(self):
        try:
            for driver in self.drivers:
                await driver.async_start()
        except Exception as error:  # noqa: BLE001  (end, don't hang: the harness sees the exit)
            logger.exception("the peers did not start")
            emit("error", line="", message=f"the peers did not start: {error}")
            self.failed = True
            await self.stop()
            return
        for driver in self.drivers:
            emit("peer", index=driver.index, port=driver.port, id=driver.state.mac, name=driver.accessory.display_name)
        emit("ready", count=len(self.drivers))
        self.watch = self.loop.create_task(self._watch_parent(os.getppid()))
        threading.Thread(target=self._read_controls, daemon=True).start()

    async def stop(self):
        if self.stopping:
            return
        self.stopping = True
        if self.watch is not None and self.watch is not asyncio.current_task():
            self.watch.cancel()
        for driver in self.drivers:
            if driver.aio_stop_event is None:
                continue  # it never started
            try:
                await driver.async_stop()
            except Exception:  # noqa: BLE001  (stop the others all the same)
                logger.exception("peer %d did not stop cleanly", driver.index)
        self.loop.stop()

    def stop_soon(self):
        self.loop.create_task(self.stop())

    async def _watch_parent(self, parent):
        """Stops when the process that started this one is gone, so a crashed test leaks nothing."""
        while not self.stopping:
            await asyncio.sleep(1.0)
            if os.getppid() != parent:
                logger.warning("parent process %d is gone: stopping", parent)
                self.stop_soon()
                return

    def _read_controls(self):
        for line in sys.stdin:
            line = line.strip()
            if line:
                self.loop.call_soon_threadsafe(self._control, line)

    def _control(self, line):
        try:
            command = json.loads(line)
            name = command["command"]
            if name == "set":
                characteristic = command.get("characteristic", "Brightness")
                if characteristic not in ("On", "Brightness"):
                    raise ValueError(f"unknown characteristic {characteristic!r}; known: On, Brightness")
                index = command.get("index")
                lamps = self.lamps if index is None else [self.lamps[int(index)]]
                for lamp in lamps:
                    lamp.change(characteristic, command["value"])
            else:
                raise ValueError(f"unknown command {name!r}")
            emit("done", command=name)
        except Exception as error:  # noqa: BLE001  (a bad control line is reported, not fatal)
            emit("error", line=line, message=str(error))


def parse_arguments():
    parser = argparse.ArgumentParser(description="Many HAP-python accessories in one process (127.0.0.1, no mDNS).")
    parser.add_argument("--count", type=int, required=True, help="how many accessory servers")
    parser.add_argument("--pincode", default="031-45-154", help="the setup code of every peer, XXX-XX-XXX")
    parser.add_argument("--state-dir", help="where the peers keep their state files (default: a temporary folder removed at exit)")
    parser.add_argument("--name-prefix", default="Lamp", help="the accessories are named '<prefix> 000', '<prefix> 001', ...")
    parser.add_argument("--verbose", action="store_true", help="log at DEBUG")
    arguments = parser.parse_args()
    if not re.fullmatch(r"\d{3}-\d{2}-\d{3}", arguments.pincode):
        parser.error("--pincode must look like 031-45-154")
    if arguments.count < 1:
        parser.error("--count must be at least 1")
    return arguments


def main():
    arguments = parse_arguments()
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if arguments.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    temporary = None
    state_dir = arguments.state_dir
    if state_dir is None:
        temporary = tempfile.mkdtemp(prefix="many-peers-")
        state_dir = temporary
    os.makedirs(state_dir, exist_ok=True)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    peers = Peers(arguments, loop, state_dir)
    try:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, peers.stop_soon)
        loop.create_task(peers.start())
        loop.run_forever()
    finally:
        loop.close()
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)
    if peers.failed:
        sys.exit(1)
    emit("stopped")


if __name__ == "__main__":
    main()
