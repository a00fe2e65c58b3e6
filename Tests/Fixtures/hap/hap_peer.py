#!/usr/bin/env python3
"""A HAP-python 5.0.0 bridge for HomeGate's HAP controller tests, on 127.0.0.1 and without mDNS.

Run it with the venv that scripts/setup makes: `.venv/bin/python Tests/Fixtures/hap/hap_peer.py
--port P [--state FILE] [--pincode 031-45-154] [--name NAME] [--temperature-interval S] [--mac ID]
[--verbose]`. Tests/TestSupport/HAPPeer.swift drives it.

Accessories: aid 1 the bridge; aid 2 "Desk Lamp" (Lightbulb: On, Brightness); aid 3 "Outdoor
Sensor" (TemperatureSensor: CurrentTemperature, which steps through 20.0, 20.5, ... 25.0 and back
to 20.0 every --temperature-interval seconds; 0 keeps it at 20.0); aid 4 "Front Door"
(LockMechanism: LockCurrentState, LockTargetState; writing the target sets the current state to
match; LockTargetState has the `tw` (timed write) permission on top of pr/pw/ev). With --camera,
aid 5 "Porch Camera" (pyhap.camera.Camera: CameraRTPStreamManagement, Microphone; stream options
are minimal and valid, no stream ever starts) answers every snapshot (POST /resource) with the
bytes of snapshot.jpg beside this script, an 8x8 gray baseline JPEG of 159 bytes.

Standard output carries only JSON lines, one object each, flushed:
  {"event": "ready", "port": P, "pincode": "031-45-154", "id": "AA:BB:CC:DD:EE:FF"}
  {"event": "write", "aid": A, "iid": I, "accessory": "Desk Lamp", "characteristic": "On", "value": true}
      (one per characteristic a client writes in PUT /characteristics, printed before HAP-python
      applies it; the value as the client's JSON had it, re-encoded by json.dumps (true stays
      true, 1 stays 1, 55.0 stays 55.0, non-ASCII text as JSON escapes); "pid": N is added when the
      request carried a timed-write pid; unknown aid/iid give null names)
  {"event": "snapshot", "aid": 5, "width": W, "height": H}
      (one per POST /resource a client makes of the camera: the aid and size its body asked for)
  {"event": "paired", "controller": "<pairing id>", "admin": true}
  {"event": "unpaired", "controller": "<pairing id>"}
  {"event": "stopped"}
Logs go to standard error (WARNING, or DEBUG with --verbose). SIGTERM or SIGINT stops it cleanly
(driver.stop); it also stops by itself when the process that started it is gone.

mDNS is off without patching HAP-python: AccessoryDriver gets address="127.0.0.1" (so it neither
guesses a LAN address nor listens on one) and an async_zeroconf_instance whose
async_register_service / async_update_service / async_unregister_service / async_close coroutines
do nothing, so the driver never makes its own AsyncZeroconf.

What HAP-python 5.0.0 does with timed writes (read in pyhap/hap_handler.py and
pyhap/accessory_driver.py):
- PUT /prepare IS implemented (HAPServerHandler.handle_prepare -> AccessoryDriver.prepare): it
  needs `ttl` (ms) and `pid`, remembers pid -> now + ttl per client connection and answers 200
  {"status": 0} (-70410 if ttl or pid is missing). The list is dropped when the connection closes.
- `pid` in PUT /characteristics is ACCEPTED but NOT ENFORCED: set_characteristics pops the pid and
  computes "expired" (unknown or past its ttl), yet still applies every write that has a value;
  an expired pid only turns entries without a value into -70410. A characteristic with `tw` is
  also written without any pid. So a test of timed writes against this peer can check that the
  controller sends /prepare and then the pid (the write lines show "pid"), not that the accessory
  refuses late or missing ones.
"""

import argparse
import asyncio
import json
import logging
import os
import re
import signal
import sys
import tempfile

from collections import deque
from time import perf_counter_ns

from pyhap import hap_protocol, util
from pyhap.accessory import Accessory, Bridge
from pyhap.accessory_driver import AccessoryDriver
from pyhap.camera import VIDEO_CODEC_PARAM_LEVEL_TYPES, VIDEO_CODEC_PARAM_PROFILE_ID_TYPES, Camera
from pyhap.const import CATEGORY_DOOR_LOCK, CATEGORY_LIGHTBULB, CATEGORY_SENSOR

logger = logging.getLogger("hap_peer")

TEMPERATURES = [20.0 + 0.5 * step for step in range(11)]  # 20.0 ... 25.0


def emit(event, **fields):
    """Prints one JSON event line on stdout in a single write and flushes it."""
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


class SilentZeroconf:
    """Stands in for zeroconf's AsyncZeroconf: announces nothing, listens to nothing."""

    zeroconf = None

    async def async_register_service(self, info, *args, **kwargs):
        logger.debug("mDNS off: not registering the service")

    async def async_update_service(self, info, *args, **kwargs):
        logger.debug("mDNS off: not updating the service")

    async def async_unregister_service(self, info, *args, **kwargs):
        logger.debug("mDNS off: not unregistering the service")

    async def async_close(self):
        pass


# HAP-python's own time per request: each data_received (open the frame, parse, answer, seal,
# hand to the transport), in microseconds. SIGUSR1 prints them as a "request-times" event and
# starts over (the benchmark's bound on a round trip from below).
REQUEST_TIMES = deque(maxlen=100_000)
_data_received = hap_protocol.HAPServerProtocol.data_received


def _timed_data_received(self, data):
    start = perf_counter_ns()
    try:
        _data_received(self, data)
    finally:
        REQUEST_TIMES.append((perf_counter_ns() - start) / 1000)


hap_protocol.HAPServerProtocol.data_received = _timed_data_received


def report_request_times():
    emit("request-times", microseconds=list(REQUEST_TIMES))
    REQUEST_TIMES.clear()


class PeerDriver(AccessoryDriver):
    """AccessoryDriver that reports what clients do on stdout."""

    def __init__(self, *, ready_fields, **kwargs):
        super().__init__(**kwargs)
        self._ready_fields = ready_fields
        self.failed = False
        self._stopping = False

    async def async_start(self):
        try:
            await super().async_start()  # the server listens once this returns
        except Exception:  # noqa: BLE001  (the port is taken, most likely: end, don't hang)
            logger.exception("the bridge did not start")
            self.failed = True
            self.loop.stop()
            return
        emit("ready", **self._ready_fields, id=self.state.mac)
        self._parent_watch = self.loop.create_task(self._watch_parent(os.getppid()))

    async def _watch_parent(self, parent):
        """Stops when the process that started this one is gone, so a crashed test leaks no peer."""
        while not await util.event_wait(self.aio_stop_event, 1.0):
            if os.getppid() != parent:
                logger.warning("parent process %d is gone: stopping", parent)
                self.stop_once()
                return

    def stop_once(self):
        """driver.stop, at most once (a second SIGTERM must not run async_stop twice)."""
        if not self._stopping:
            self._stopping = True
            self.stop()

    def _names(self, aid, iid):
        try:
            accessory = self.accessory if aid == self.accessory.aid else self.accessory.accessories.get(aid)
            if accessory is None:
                return None, None
            characteristic = accessory.iid_manager.get_obj(iid)
            return accessory.display_name, getattr(characteristic, "display_name", None)
        except Exception:  # noqa: BLE001  (an unknown iid must not stop the report)
            return None, None

    def set_characteristics(self, chars_query, client_addr):
        pid = chars_query.get("pid")
        for query in chars_query.get("characteristics", []):
            if "value" not in query:
                continue  # an event subscription, not a write
            aid, iid = query.get("aid"), query.get("iid")
            accessory, characteristic = self._names(aid, iid)
            fields = {
                "aid": aid,
                "iid": iid,
                "accessory": accessory,
                "characteristic": characteristic,
                "value": query["value"],
            }
            if pid is not None:
                fields["pid"] = pid
            emit("write", **fields)
        return super().set_characteristics(chars_query, client_addr)

    def pair(self, client_username_bytes, client_public, client_permissions):
        result = super().pair(client_username_bytes, client_public, client_permissions)
        permissions = client_permissions[0] if isinstance(client_permissions, (bytes, bytearray)) else client_permissions
        emit("paired", controller=client_username_bytes.decode("utf-8", "replace"), admin=bool(permissions & 1))
        return result

    def unpair(self, client_uuid):
        super().unpair(client_uuid)
        emit("unpaired", controller=str(client_uuid))


class PeerBridge(Bridge):
    def setup_message(self):
        # HAP-python prints the setup code and a QR code on stdout; stdout is for JSON lines only.
        logger.info("setup code %s", self.driver.state.pincode.decode())


class DeskLamp(Accessory):
    category = CATEGORY_LIGHTBULB

    def __init__(self, driver):
        super().__init__(driver, "Desk Lamp", aid=2)
        self.set_info_service(firmware_revision="1.0.0", manufacturer="HomeGate Tests", model="Desk Lamp", serial_number="HG-LAMP-1")
        service = self.add_preload_service("Lightbulb", chars=["On", "Brightness"])
        service.configure_char("On", value=False)
        service.configure_char("Brightness", value=100)


class OutdoorSensor(Accessory):
    category = CATEGORY_SENSOR

    def __init__(self, driver, interval):
        super().__init__(driver, "Outdoor Sensor", aid=3)
        self.set_info_service(firmware_revision="1.0.0", manufacturer="HomeGate Tests", model="Outdoor Sensor", serial_number="HG-TEMP-1")
        service = self.add_preload_service("TemperatureSensor")
        self.temperature = service.configure_char("CurrentTemperature", value=TEMPERATURES[0])
        self.interval = interval
        self.step = 0

    async def run(self):
        if self.interval <= 0:
            return
        while not await util.event_wait(self.driver.aio_stop_event, self.interval):
            self.step = (self.step + 1) % len(TEMPERATURES)
            self.temperature.set_value(TEMPERATURES[self.step])


class FrontDoor(Accessory):
    category = CATEGORY_DOOR_LOCK

    def __init__(self, driver):
        super().__init__(driver, "Front Door", aid=4)
        self.set_info_service(firmware_revision="1.0.0", manufacturer="HomeGate Tests", model="Front Door", serial_number="HG-LOCK-1")
        service = self.add_preload_service("LockMechanism")
        self.current = service.configure_char("LockCurrentState", value=1)
        self.target = service.configure_char("LockTargetState", value=1, setter_callback=self.set_target)
        # Permissions is a list shared with the loader's template: replace it, don't append to it.
        permissions = list(self.target.properties["Permissions"])
        if "tw" not in permissions:
            permissions.append("tw")
        self.target.override_properties(properties={"Permissions": permissions})

    def set_target(self, value):
        self.current.set_value(value)


SNAPSHOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "snapshot.jpg")

# The least HAP-python's Camera accepts: one H.264 profile and level, one resolution, one audio
# codec, an IPv4 address to stream from. Nothing here ever streams.
CAMERA_OPTIONS = {
    "video": {
        "codec": {"profiles": [VIDEO_CODEC_PARAM_PROFILE_ID_TYPES["BASELINE"]], "levels": [VIDEO_CODEC_PARAM_LEVEL_TYPES["TYPE3_1"]]},
        "resolutions": [[320, 240, 15]],
    },
    "audio": {"codecs": [{"type": "OPUS", "samplerate": 24}]},
    "address": "127.0.0.1",
}


class PorchCamera(Camera):
    def __init__(self, driver):
        super().__init__(CAMERA_OPTIONS, driver, "Porch Camera", aid=5)
        self.set_info_service(firmware_revision="1.0.0", manufacturer="HomeGate Tests", model="Porch Camera", serial_number="HG-CAM-1")
        with open(SNAPSHOT, "rb") as image:
            self.image = image.read()

    async def async_get_snapshot(self, image_size):
        emit("snapshot", aid=image_size.get("aid"), width=image_size.get("image-width"), height=image_size.get("image-height"))
        return self.image


def parse_arguments():
    parser = argparse.ArgumentParser(description="A HAP-python bridge for HomeGate's tests (127.0.0.1, no mDNS).")
    parser.add_argument("--port", type=int, required=True, help="TCP port on 127.0.0.1")
    parser.add_argument("--state", help="HAP-python persist file; pairings survive a restart with the same file "
                                         "(default: a temporary file removed at exit)")
    parser.add_argument("--pincode", default="031-45-154", help="setup code, XXX-XX-XXX")
    parser.add_argument("--name", default="HomeGate Test Bridge", help="the bridge's name")
    parser.add_argument("--temperature-interval", type=float, default=0.5,
                        help="seconds between CurrentTemperature changes (0: never changes)")
    parser.add_argument("--mac", help="fixed device id (XX:XX:XX:XX:XX:XX); an existing state file's id wins")
    parser.add_argument("--camera", action="store_true", help="add aid 5, a camera answering snapshots with snapshot.jpg")
    parser.add_argument("--verbose", action="store_true", help="log at DEBUG")
    arguments = parser.parse_args()
    if not re.fullmatch(r"\d{3}-\d{2}-\d{3}", arguments.pincode):
        parser.error("--pincode must look like 031-45-154")
    if arguments.mac and not re.fullmatch(r"([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}", arguments.mac):
        parser.error("--mac must look like AA:BB:CC:DD:EE:FF")
    return arguments


def main():
    arguments = parse_arguments()
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if arguments.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    temporary_state = None
    state_file = arguments.state
    if state_file is None:
        handle, temporary_state = tempfile.mkstemp(prefix="hap-peer-", suffix=".state")
        os.close(handle)
        os.remove(temporary_state)  # HAP-python loads an existing file: let it create this one
        state_file = temporary_state

    driver = PeerDriver(
        ready_fields={"port": arguments.port, "pincode": arguments.pincode},
        address="127.0.0.1",
        port=arguments.port,
        persist_file=state_file,
        pincode=arguments.pincode.encode(),
        mac=arguments.mac.upper() if arguments.mac else None,
        async_zeroconf_instance=SilentZeroconf(),
    )
    bridge = PeerBridge(driver, arguments.name)
    bridge.set_info_service(firmware_revision="1.0.0", manufacturer="HomeGate Tests", model="Test Bridge", serial_number="HG-BRIDGE-1")
    bridge.add_accessory(DeskLamp(driver))
    bridge.add_accessory(OutdoorSensor(driver, arguments.temperature_interval))
    bridge.add_accessory(FrontDoor(driver))
    if arguments.camera:
        bridge.add_accessory(PorchCamera(driver))
    driver.add_accessory(bridge)

    for signum in (signal.SIGTERM, signal.SIGINT):
        driver.loop.add_signal_handler(signum, driver.stop_once)
    driver.loop.add_signal_handler(signal.SIGUSR1, report_request_times)
    try:
        driver.start()
    finally:
        if temporary_state and os.path.exists(temporary_state):
            os.remove(temporary_state)
    if driver.failed:
        sys.exit(1)
    emit("stopped")


if __name__ == "__main__":
    main()
