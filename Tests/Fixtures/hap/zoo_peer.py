#!/usr/bin/env python3
"""Serves a real device's captured accessory database over real HAP, for HomeGate's device zoo.

Run it with the venv that scripts/setup makes: `.venv/bin/python Tests/Fixtures/hap/zoo_peer.py
--port P --database Tests/Fixtures/hap/zoo/eve_energy.json [--pincode 031-45-154] [--mac ID]
[--state FILE] [--mdns [--name NAME] [--category N]] [--verbose]`. Sources/Harness/ZooPeer.swift drives it.

HAP-python 5.0.0 does the HAP part (pair-setup, pair-verify, the encrypted sessions, EVENT
messages, pairings); this script replaces the accessory model behind it with the captured
database (aiohomekit's fixture format: the JSON array of accessories of a `GET /accessories`):

- `GET /accessories` answers the database as captured, with the current values (a
  characteristic without `pr` is served without a value, as devices do);
- `GET /characteristics` answers the current values (-70409 for an unknown aid.iid, -70405 for a
  characteristic without `pr`);
- `PUT /characteristics`: a value for a characteristic with `pw` is taken as it comes (the
  device's own checks are not modelled) and pushed as an EVENT to the other subscribed
  controllers; without `pw`: -70404; an `ev` subscription is accepted for characteristics with
  `ev`, else refused with -70406, as is every subscription while `refuse-events` is on.

Standard output carries only JSON lines, one object each, flushed:
  {"event": "ready", "port": P, "pincode": "...", "id": "AA:BB:CC:DD:EE:FF", "accessories": N}
  {"event": "put", "values": N}                              (one PUT /characteristics with N values)
  {"event": "write", "aid": A, "iid": I, "value": V}
  {"event": "subscribed", "aid": A, "iid": I, "ev": true}   (or "refused": true)
  {"event": "paired", "controller": "<pairing id>", "admin": true}
  {"event": "unpaired", "controller": "<pairing id>"}
  {"event": "done", "command": "..."}                         (after each control line)
  {"event": "stopped"}

Control lines on standard input, one JSON object each:
  {"command": "set", "aid": A, "iid": I, "value": V}   the device changes a value itself (EVENT)
  {"command": "refuse-events", "on": true}             refuse every later event subscription
  {"command": "hostile", "mode": M}                    GET /accessories answers, from now on: M =
                                                       malformed (cut-off JSON), deep (100,000 nested
                                                       arrays), huge (a 10 MB body), many (10,000
                                                       characteristics); "peaceful" ends it
  {"command": "drop"}                                  closes every controller's connection
  {"command": "unknown-event"}                         an EVENT for aid 99, iid 99 to subscribers
  {"command": "event-flood", "aid": A, "iid": I, "count": N}   N EVENTs of values 0 ... N-1, at once
  {"command": "misbehave", "mode": M, "seconds": S}    on the wire, from now on: M = silent (answers
                                                       nothing), slow (answers S seconds late),
                                                       endless-chunked (a chunked body that never
                                                       ends), bad-tag (every encrypted frame's tag is
                                                       wrong); null ends it
  {"command": "garbage", "on": true}                   GET /accessories answers a database no
                                                       controller can use (also: --garbage)
  {"command": "add-pairing", "controller": UUID, "admin": false}  another controller pairs with
                                                       the device (public_key: 64 hex digits, optional)
  {"command": "break", "step": S}                      step S fails once, the next time it comes:
                                                       verify (pair-verify M1 answered with an
                                                       authentication error) or database (GET
                                                       /accessories unusable); prints {"event":
                                                       "broken", "step": S} when it does
  {"command": "replace", "database": "PATH"}           a new database; the configuration number goes up
mDNS is off (127.0.0.1 only), as in hap_peer.py, unless --mdns is given: then HAP-python
announces the peer with its own zeroconf, as a real accessory does (use it only inside a network
namespace a test made, never on the machine's real interfaces).
"""

import argparse
import copy
import json
import logging
import os
import re
import signal
import sys
import tempfile
import threading

import pyhap.hap_handler
import pyhap.hap_protocol
from pyhap.accessory import Bridge

from hap_peer import PeerDriver, SilentZeroconf, emit

logger = logging.getLogger("zoo_peer")

NOT_READABLE = -70405
NOT_WRITABLE = -70404
NO_EVENTS = -70406
NO_SUCH_RESOURCE = -70409


class RawBody(bytes):
    """A `GET /accessories` body sent as it is, not encoded as JSON (for the hostile modes)."""


_to_hap_json = pyhap.hap_handler.to_hap_json
pyhap.hap_handler.to_hap_json = lambda value: value if isinstance(value, RawBody) else _to_hap_json(value)

# How the peer misbehaves on the wire (the `misbehave` control): every answer it writes is
# dropped ("silent": it never answers), held back ("slow": `seconds` late), replaced by an answer
# whose chunked body never ends ("endless-chunked"), or sent with the last byte of each encrypted
# frame's authentication tag flipped ("bad-tag": garbage after pair-verify). None: it behaves.
MISBEHAVIOUR = {"mode": None, "seconds": 0.0}
_write = pyhap.hap_protocol.HAPServerProtocol.write


def _misbehaving_write(protocol, data):
    mode = MISBEHAVIOUR["mode"]
    if mode == "silent":
        return
    if mode == "slow":
        protocol.loop.call_later(MISBEHAVIOUR["seconds"], _write, protocol, data)
        return
    if mode == "endless-chunked" and protocol.hap_crypto:
        # An answer whose chunked body starts and never ends.
        _write(protocol, b"HTTP/1.1 200 OK\r\nContent-Type: application/hap+json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"cha\r\n")
        return
    if mode == "bad-tag" and protocol.hap_crypto:
        frames = list(protocol.hap_crypto.encrypt(data))
        frames[-1] = frames[-1][:-1] + bytes([frames[-1][-1] ^ 0xFF])
        protocol.transport.writelines(frames)
        return
    _write(protocol, data)


pyhap.hap_protocol.HAPServerProtocol.write = _misbehaving_write

# Steps that fail once, the next time they happen (the `break` control): "verify" (the next
# pair-verify M1 is answered with an authentication error, as a device that is still busy
# with its pair-setup answers), "database" (the next GET /accessories is unusable).
BROKEN_STEPS = set()
STEPS = ("verify", "database")

_pair_verify_one = pyhap.hap_handler.HAPServerHandler._pair_verify_one


def _breakable_pair_verify_one(handler, tlv_objects):
    if "verify" in BROKEN_STEPS:
        BROKEN_STEPS.discard("verify")
        emit("broken", step="verify")
        handler._send_authentication_error_tlv_response(pyhap.hap_handler.HAP_TLV_STATES.M2)
        return
    _pair_verify_one(handler, tlv_objects)


pyhap.hap_handler.HAPServerHandler._pair_verify_one = _breakable_pair_verify_one


def hostile_database(mode):
    """What GET /accessories answers in a hostile mode."""
    if mode == "malformed":
        return RawBody(b'{"accessories": [{"aid": 1, "services": [{"iid": 1, "type": "3E", "characteristics": [')
    if mode == "deep":
        return RawBody(b'{"accessories": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    if mode == "huge":
        return RawBody(b'{"accessories": [], "padding": "' + b"x" * 10_000_000 + b'"}')
    if mode == "many":
        characteristics = [{"iid": 10 + index, "type": "F%07X-0000-1000-8000-AAAAAAAAAAAA" % index, "perms": ["pr"],
                            "format": "int", "value": index} for index in range(10_000)]
        return {"accessories": [{"aid": 1, "services": [
            {"iid": 1, "type": "3E", "characteristics": [
                {"iid": 2, "type": "23", "perms": ["pr"], "format": "string", "value": "Many"},
                {"iid": 3, "type": "14", "perms": ["pw"], "format": "bool"}]},
            {"iid": 9, "type": "FFFFFFFF-0000-1000-8000-AAAAAAAAAAAA", "characteristics": characteristics}]}]}
    raise ValueError(f"unknown hostile mode {mode!r}; known: malformed, deep, huge, many")



def _whole_number(text):
    """A JSON integer: an int within 64 bits, a float beyond."""
    number = int(text)
    return number if -(2**63) <= number < 2**64 else float(number)

class Database:
    """The captured accessories, with a value table by (aid, iid)."""

    def __init__(self, accessories):
        self.accessories = accessories
        self.characteristics = {}
        for accessory in accessories:
            for service in accessory.get("services", []):
                for characteristic in service.get("characteristics", []):
                    key = (accessory.get("aid"), characteristic.get("iid"))
                    self.characteristics.setdefault(key, characteristic)

    @classmethod
    def load(cls, path):
        with open(path, encoding="utf-8") as handle:
            # A JSON number is a number: a whole one beyond 64 bits (ConnectSense's maxValue
            # 34028234663852885981170418348) is served as a float, which orjson can encode.
            accessories = json.load(handle, parse_int=_whole_number)
        if isinstance(accessories, dict):
            accessories = accessories.get("accessories", [])
        return cls(accessories)

    def served(self, include_value):
        accessories = copy.deepcopy(self.accessories)
        for accessory in accessories:
            for service in accessory.get("services", []):
                for characteristic in service.get("characteristics", []):
                    if not include_value or "pr" not in (characteristic.get("perms") or ["pr"]):
                        characteristic.pop("value", None)
        return accessories


class ZooDriver(PeerDriver):
    """hap_peer's driver (ready line, pairing lines, parent watch) whose accessories are a
    captured database."""

    def __init__(self, *, database, garbage, **kwargs):
        super().__init__(**kwargs)
        self.database = database
        self.garbage = garbage
        self.hostile = None
        self.refusing_events = False

    async def async_start(self):
        await super().async_start()
        if not self.failed:
            threading.Thread(target=self._read_controls, daemon=True).start()

    # The HAP side ------------------------------------------------------------------------------

    def get_accessories(self, include_value=True):
        if self.hostile:
            return hostile_database(self.hostile)
        if self.garbage:
            return {"accessories": "no accessories here"}
        if "database" in BROKEN_STEPS:
            BROKEN_STEPS.discard("database")
            emit("broken", step="database")
            return {"accessories": "no accessories here"}
        return {"accessories": self.database.served(include_value)}

    def get_characteristics(self, char_ids):
        answers = []
        for path in char_ids:
            aid, iid = (int(part) for part in path.split("."))
            characteristic = self.database.characteristics.get((aid, iid))
            if characteristic is None:
                answers.append({"aid": aid, "iid": iid, "status": NO_SUCH_RESOURCE})
            elif "pr" not in (characteristic.get("perms") or ["pr"]):
                answers.append({"aid": aid, "iid": iid, "status": NOT_READABLE})
            else:
                answers.append({"aid": aid, "iid": iid, "value": characteristic.get("value"), "status": 0})
        return {"characteristics": answers}

    def set_characteristics(self, chars_query, client_addr):
        values = sum(1 for query in chars_query.get("characteristics", []) if "value" in query)
        if values:
            emit("put", values=values)  # one PUT /characteristics, with this many values
        results = []
        for query in chars_query.get("characteristics", []):
            aid, iid = query.get("aid"), query.get("iid")
            characteristic = self.database.characteristics.get((aid, iid))
            if characteristic is None:
                results.append({"aid": aid, "iid": iid, "status": NO_SUCH_RESOURCE})
                continue
            perms = characteristic.get("perms") or []
            status = 0
            if "ev" in query:
                status = self._subscribe(aid, iid, bool(query["ev"]), "ev" in perms, client_addr)
            if "value" in query and status == 0:
                if "pw" not in perms:
                    status = NOT_WRITABLE
                else:
                    characteristic["value"] = query["value"]
                    emit("write", aid=aid, iid=iid, value=query["value"])
                    self.publish({"aid": aid, "iid": iid, "value": query["value"]}, sender_client_addr=client_addr)
            results.append({"aid": aid, "iid": iid, "status": status})
        if all(result["status"] == 0 for result in results):
            return None
        return {"characteristics": results}

    def _subscribe(self, aid, iid, on, supported, client_addr):
        if on and (self.refusing_events or not supported):
            emit("subscribed", aid=aid, iid=iid, ev=True, refused=True)
            return NO_EVENTS
        self.async_subscribe_client_topic(client_addr, f"{aid}.{iid}", on)
        emit("subscribed", aid=aid, iid=iid, ev=on)
        return 0

    # The control side --------------------------------------------------------------------------

    def _read_controls(self):
        for line in sys.stdin:
            line = line.strip()
            if line:
                self.loop.call_soon_threadsafe(self._control, line)
        # The end of the input is not a stop: SIGTERM is (and the parent's going away, see hap_peer).

    def _control(self, line):
        try:
            command = json.loads(line)
            name = command["command"]
            if name == "set":
                key = (command["aid"], command["iid"])
                self.database.characteristics[key]["value"] = command["value"]
                self.publish({"aid": key[0], "iid": key[1], "value": command["value"]})
            elif name == "hostile":
                hostile_database(command["mode"])  # checks the mode
                self.hostile = command["mode"]
            elif name == "peaceful":
                self.hostile = None
            elif name == "drop":
                for connection in list(self.http_server.connections.values()):
                    connection.close()
            elif name == "misbehave":
                mode = command.get("mode")
                if mode not in (None, "silent", "slow", "endless-chunked", "bad-tag"):
                    raise ValueError(f"unknown misbehaviour {mode!r}; known: silent, slow, endless-chunked, bad-tag, null")
                MISBEHAVIOUR["mode"] = mode
                MISBEHAVIOUR["seconds"] = float(command.get("seconds", 3))
            elif name == "event-flood":
                # An EVENT storm: `count` changes of one characteristic, each sent at once
                # (immediate: HAP-python does not coalesce them), as fast as the loop writes.
                key = (command["aid"], command["iid"])
                characteristic = self.database.characteristics[key]
                for index in range(int(command["count"])):
                    characteristic["value"] = index
                    self.publish({"aid": key[0], "iid": key[1], "value": index}, immediate=True)
            elif name == "unknown-event":
                for clients in list(self.topics.values()):
                    for client in list(clients):
                        self.http_server.push_event({"aid": 99, "iid": 99, "value": 1}, client, True)
            elif name == "garbage":
                self.garbage = bool(command.get("on", True))
            elif name == "add-pairing":
                # Another controller pairs (an iPhone's Home, a second Home Assistant): its
                # pairing id (a UUID, as HAP-python requires), a public key, admin or not.
                controller = str(command["controller"])
                key = bytes.fromhex(command.get("public_key", "11" * 32))
                self.state.add_paired_client(controller.encode(), key, b"\x01" if command.get("admin") else b"\x00")
                emit("paired", controller=controller, admin=bool(command.get("admin")))
            elif name == "break":
                if command.get("step") not in STEPS:
                    raise ValueError(f"unknown step {command.get('step')!r}; known: {', '.join(STEPS)}")
                BROKEN_STEPS.add(command["step"])
            elif name == "refuse-events":
                self.refusing_events = bool(command.get("on", True))
            elif name == "replace":
                self.database = Database.load(command["database"])
                self.config_changed()  # c# goes up, in the mDNS advertisement too (with --mdns)
            else:
                raise ValueError(f"unknown command {name!r}")
            emit("done", command=name, configuration=self.state.config_version)
        except Exception as error:  # noqa: BLE001  (a bad control line is reported, not fatal)
            emit("error", line=line, message=str(error))


def parse_arguments():
    parser = argparse.ArgumentParser(description="Serves a captured accessory database over HAP (127.0.0.1, no mDNS).")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--database", required=True, help="an aiohomekit fixture (JSON array of accessories)")
    parser.add_argument("--pincode", default="031-45-154")
    parser.add_argument("--mac", help="fixed device id (XX:XX:XX:XX:XX:XX)")
    parser.add_argument("--state", help="HAP-python persist file (default: a temporary file removed at exit)")
    parser.add_argument("--garbage", action="store_true", help="GET /accessories answers an unusable database")
    parser.add_argument("--mdns", action="store_true",
                        help="advertise by mDNS (HAP-python's own zeroconf); ONLY inside a network namespace a test made")
    parser.add_argument("--name", default="Zoo Peer",
                        help="the name it announces (mDNS name before the id's last 6 digits, and md); default: Zoo Peer")
    parser.add_argument("--category", type=int, default=2, help="the HAP category it announces (ci); default: 2, bridge")
    parser.add_argument("--verbose", action="store_true")
    arguments = parser.parse_args()
    if not re.fullmatch(r"\d{3}-\d{2}-\d{3}", arguments.pincode):
        parser.error("--pincode must look like 031-45-154")
    return arguments


def main():
    arguments = parse_arguments()
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if arguments.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    database = Database.load(arguments.database)
    temporary_state = None
    state_file = arguments.state
    if state_file is None:
        handle, temporary_state = tempfile.mkstemp(prefix="zoo-peer-", suffix=".state")
        os.close(handle)
        os.remove(temporary_state)
        state_file = temporary_state
    driver = ZooDriver(
        database=database,
        garbage=arguments.garbage,
        ready_fields={"port": arguments.port, "pincode": arguments.pincode, "accessories": len(database.accessories)},
        address="127.0.0.1",
        port=arguments.port,
        persist_file=state_file,
        pincode=arguments.pincode.encode(),
        mac=arguments.mac.upper() if arguments.mac else None,
        async_zeroconf_instance=None if arguments.mdns else SilentZeroconf(),
    )
    # HAP-python needs an accessory of its own for its state and setup; what it serves is the database.
    placeholder = Bridge(driver, arguments.name)
    placeholder.category = arguments.category
    placeholder.setup_message = lambda: None
    driver.add_accessory(placeholder)
    for signum in (signal.SIGTERM, signal.SIGINT):
        driver.loop.add_signal_handler(signum, driver.stop_once)
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
