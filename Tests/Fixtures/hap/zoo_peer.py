#!/usr/bin/env python3
"""Serves a real device's captured accessory database over real HAP, for HomeGate's device zoo.

Run it with the venv that scripts/setup makes: `.venv/bin/python Tests/Fixtures/hap/zoo_peer.py
--port P --database Tests/Fixtures/hap/zoo/eve_energy.json [--pincode 031-45-154] [--mac ID]
[--state FILE] [--mdns [--name NAME] [--category N]] [--verbose]`. Sources/Harness/ZooPeer.swift drives it.
`zoo_peer.py --decode-transition BASE64` starts no HAP: it prints one JSON object, the Adaptive
Lighting transition in a Characteristic Value Transition Control write (see below), and exits.

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
  The answer is 204, or 207 with every characteristic's status when one failed or one answers a
  value (Adaptive Lighting's write-response, below).

Adaptive Lighting (the accessory side of HomeKit's, as HAP-NodeJS's AdaptiveLightingController does
it in AUTOMATIC mode) runs on every Lightbulb service (type 43) that has Characteristic Value
Transition Control (143), Supported Characteristic Value Transition Configuration (144), Color
Temperature (CE) and Brightness (08); Characteristic Value Active Transition Count (24B), Hue (13)
and Saturation (2F) are used when there (types compare on their first 8 hex digits, so "143" and
"00000143-0000-1000-8000-0026BB765291" are one). The peer keeps a clock of its own for it: the
wall clock in milliseconds, plus what `advance` controls added.
- Such a service's 144 answers (its captured value is replaced when the database is loaded) the
  base64 of TLV8 0x01 = a list (items parted by an empty type-0 item) of {0x01 iid (1, 2, 4 or 8
  byte little-endian uint, the smallest that fits), 0x02 type (1 byte)}: Brightness with 1, then
  Color Temperature with 2 (handleSupportedTransitionConfigurationRead). 24B starts at 0, 143 at "".
- A PUT of 143 takes a base64 string (anything else: -70410) of TLV8 (items of one type in a row
  joined, items over 255 bytes come split): 0x01 = read the current configuration {0x01 iid},
  0x02 = update {0x01 = configuration {0x01 iid (var uint; a characteristic of the service),
  0x02 parameters {0x01 transition id (16 bytes), 0x02 start (8 bytes LE uint, milliseconds
  since 2001-01-01 00:00 UTC), 0x03 (8 bytes, optional)}, 0x03 (1 byte, 1: enable), 0x05 curve
  {0x01 entries (a list) {0x01 brightness adjustment factor (float32 LE), 0x02 colour temperature
  (float32 LE, mired), 0x03 transition time (var uint ms, from the previous entry), 0x04 duration
  (var uint ms, optional; it belongs to the PREVIOUS entry, which holds its value that long before
  moving on)}, 0x02 brightness iid (var uint), 0x03 brightness range {0x01 min, 0x02 max (uint32
  LE)}}, 0x06 update interval (uint16 LE ms; 60000 when absent), 0x08 notify interval threshold
  (uint32 LE ms)}} (handleTransitionControlWrite). The value answered (with "r": true in the PUT:
  {"aid", "iid", "status": 0, "value": "<base64>"}) is the read's answer, then the update's:
    read, while a transition is on: 0x01 {0x01 its iid, 0x02 its parameters, 0x03 1, 0x05 its
      curve (each entry's 0x04 the previous entry's duration, 0 for none), 0x06 update interval,
      0x08 notify interval threshold (var uints)}; while none is: nothing
      (handleTransitionControlReadTransition; another iid than the transition's fails);
    update without 0x03 (or 0x03 = 0): the transition is off; answers 0x02 with no value;
    update with 0x03: the transition starts (or is renewed: the old one ends without a line);
      answers 0x02 {0x01 {0x01 iid, 0x02 the parameters as received, 0x03 time since start 0}}
      (or 0x02 with no value when the curve has already ended: it went off at once).
  A write that cannot be decoded turns the transition off and fails with -70402.
  A GET of 143 answers, while a transition is on, 0x01 {0x01 iid, 0x02 parameters, 0x03
  milliseconds since it started by the peer's clock (var uint)}; while none is, "".
- On a start: 24B becomes 1 (an EVENT, also on a renewal), then at once and every update interval
  (a timer on the loop; an end, a renewal and `advance` restart it) the colour temperature for
  now: the offset into the curve is the peer's clock minus the clock when the write came (the
  reference's timeMillisOffset), the curve is searched as getCurrentAdaptiveLightingTransitionPoint
  does (from the entry found last time, again from the start when the offset lies before it; the
  last-found entry is forgotten when the transition goes off, not on a renewal), temperature and
  factor hold at the lower entry during its duration and are interpolated linearly after it,
  brightness = Brightness's value clamped to the curve's range, temperature = round half up
  (temperature + factor * brightness) clamped to Color Temperature's minValue..maxValue (140..500
  when absent). It becomes Color Temperature's value and an EVENT to every subscribed controller
  (the reference sends these only every notify interval threshold; this peer sends each). An
  offset past the curve's end turns the transition off ("end of the curve"). A temperature that
  comes out as no number (0/0: the offset exactly at an entry of transition time 0 whose lower
  entry has no duration, as at the start of a curve whose first two entries have time 0; or a
  Brightness that is no number) makes the reference's update throw (its hue/saturation lookup
  fails): so the write that starts such a transition fails with -70402 and turns it off, and a
  later update sets nothing, prints temperature null and sets no next timer (the transition
  stays on).
- While a transition is on: a controller's write (PUT) of Color Temperature, Hue or Saturation
  turns it off ("manual write"; the `set` control is the device's own change, not a write); a new
  Brightness value different from the old one (by a PUT or by `set`) recomputes the colour
  temperature at once (without moving the timer, and without ending at the curve's end), value
  and EVENT. Off: 24B becomes 0 (an EVENT, also when nothing was on), the timer stops.
- Adaptive Lighting does not convert the colour temperature to Hue and Saturation (the reference
  sets both silently from a table); `replace` forgets every transition without a line.

Standard output carries only JSON lines, one object each, flushed:
  {"event": "ready", "port": P, "pincode": "...", "id": "AA:BB:CC:DD:EE:FF", "accessories": N}
  {"event": "put", "values": N}                              (one PUT /characteristics with N values)
  {"event": "write", "aid": A, "iid": I, "value": V}
  {"event": "subscribed", "aid": A, "iid": I, "ev": true}   (or "refused": true)
  {"event": "paired", "controller": "<pairing id>", "admin": true}
  {"event": "unpaired", "controller": "<pairing id>"}
  {"event": "adaptive-lighting", "aid": A, "service": S, "on": true, "entries": N, "temperature": T,
   "brightness": B, "updateInterval": ms, "notifyIntervalThreshold": ms, "transitionId": "<uuid>",
   "start": <epoch ms>, "renewed": false}
      (a transition starts on Lightbulb service S of accessory A, or "renewed": true when one was
      on: N curve entries, T the colour temperature it set at once (null when the curve has already
      ended: an "on": false line follows), B the brightness T was computed with (Brightness's
      value clamped to the curve's range), transitionId as the reference keeps it (lowercase,
      8-4-4-4-12), start the curve's start in milliseconds since 1970)
  {"event": "adaptive-lighting-update", "aid": A, "service": S, "temperature": T, "cause": C}
      (the colour temperature recomputed, set and sent: C = timer (each update interval),
      advance (the `advance` control) or brightness (a new Brightness value); T null when it
      came out as no number, see above: nothing set, no next timer)
  {"event": "adaptive-lighting", "aid": A, "service": S, "on": false, "reason": R, "wasOn": W}
      (the transition is off: R = "disabled by the controller" (an update without 0x03; also when
      none was on, W false), "manual write", "end of the curve", or "invalid write" with "message")
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
  {"command": "advance", "ms": N}                      Adaptive Lighting's clock moves N ms (>= 0) ahead;
                                                       every transition on recomputes at once (as its
                                                       timer would, restarting it; past the curve's
                                                       end it goes off) and prints its update line
--decode-transition prints the update of a 143 write as the peer decodes it, in the reference's
activeTransition names: {"iid", "transitionId", "transitionStartBuffer" (hex), "id3" (hex or null),
"brightnessCharacteristicIID", "brightnessAdjustmentRange": {"minBrightnessValue",
"maxBrightnessValue"}, "transitionCurve": [{"temperature", "brightnessAdjustmentFactor" (the float32
values), "transitionTime", "duration" (only when the next entry sent one)}], "updateInterval",
"notifyIntervalThreshold", "transitionStartMillis"}, or {"disabled": true}; a write without an
update, or one that cannot be decoded: {"error": "..."} and exit status 1.

mDNS is off (127.0.0.1 only), as in hap_peer.py, unless --mdns is given: then HAP-python
announces the peer with its own zeroconf, as a real accessory does (use it only inside a network
namespace a test made, never on the machine's real interfaces).
"""

import argparse
import base64
import copy
import json
import logging
import math
import os
import re
import signal
import struct
import sys
import tempfile
import threading
import time

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



# Adaptive Lighting (the accessory side) ------------------------------------------------------
# What HAP-NodeJS's AdaptiveLightingController (AUTOMATIC mode) does, in this peer's own words:
# the TLV8 it reads and answers (src/lib/util/tlv.ts), the transition it keeps (its
# activeTransition, same field names) and the colour temperature it computes from it.

LIGHTBULB = "00000043"
TRANSITION_CONTROL = "00000143"
SUPPORTED_TRANSITION_CONFIGURATION = "00000144"
ACTIVE_TRANSITION_COUNT = "0000024B"
COLOR_TEMPERATURE = "000000CE"
BRIGHTNESS = "00000008"
HUE = "00000013"
SATURATION = "0000002F"

SERVICE_COMMUNICATION_FAILURE = -70402
INVALID_VALUE = -70410

EPOCH_MILLIS_2001 = 978_307_200_000  # 2001-01-01 00:00:00 UTC in milliseconds since 1970
DEFAULT_UPDATE_INTERVAL = 60_000
DEFAULT_TEMPERATURE_RANGE = (140, 500)  # when Color Temperature has no minValue / maxValue


class TransitionError(ValueError):
    """A Characteristic Value Transition Control write that cannot be followed."""


def short_type(type_text):
    """A HAP type's first 8 hex digits, upper case: "143", "00000143-0000-1000-8000-0026BB765291" ->
    "00000143"."""
    text = str(type_text or "").strip().upper()
    if "-" in text:
        return text.split("-", 1)[0].rjust(8, "0")
    if len(text) == 32:
        return text[:8]
    return text.rjust(8, "0")


def tlv_encode(*items):
    """TLV8 of type, value, type, value, ...: a value is bytes, an int (one byte) or a list of bytes
    (items of the type parted by an empty type-0 item; an empty list is one empty item); values
    over 255 bytes go in items of 255 bytes and the rest."""
    out = bytearray()
    for kind, value in zip(items[0::2], items[1::2]):
        if isinstance(value, int):
            value = bytes([value])
        if isinstance(value, list):
            if not value:
                out += bytes([kind, 0])
            for index, entry in enumerate(value):
                if index:
                    out += b"\x00\x00"
                out += tlv_encode(kind, entry)
        elif len(value) <= 255:
            out += bytes([kind, len(value)]) + value
        else:
            for start in range(0, len(value), 255):
                chunk = value[start:start + 255]
                out += bytes([kind, len(chunk)]) + chunk
    return bytes(out)


def tlv_decode(data):
    """TLV8 as type -> bytes, the items of one type joined wherever they are (the reference's
    decode; as it, a value cut short is what is there)."""
    if data is None:
        raise TransitionError("a TLV8 item is missing")
    objects = {}
    index = 0
    while index < len(data):
        kind = data[index]
        length = data[index + 1] if index + 1 < len(data) else 0
        value = bytes(data[index + 2:index + 2 + length])
        objects[kind] = objects.get(kind, b"") + value
        index += 2 + length
    return objects


def tlv_decode_with_lists(data):
    """TLV8 as type -> bytes or list of bytes (the reference's decodeWithLists): an item of the type
    just before an empty type-0 item starts a list element; an item following one of 255 bytes of
    its type continues it; any other repeated type fails."""
    if data is None:
        raise TransitionError("a TLV8 item is missing")
    result = {}
    index = 0
    last_type = last_length = -1
    after_delimiter = False
    while index < len(data):
        if index + 1 >= len(data):
            raise TransitionError("a TLV8 item is cut short")
        kind, length = data[index], data[index + 1]
        value = bytes(data[index + 2:index + 2 + length])
        index += 2 + length
        if kind == 0 and length == 0:
            after_delimiter = True
            continue
        if kind in result:
            existing = result[kind]
            if after_delimiter and last_type == kind:
                result[kind] = (existing if isinstance(existing, list) else [existing]) + [value]
            elif last_type == kind and last_length == 255:
                if isinstance(existing, list):
                    existing[-1] += value
                else:
                    result[kind] = existing + value
            else:
                raise TransitionError(f"TLV8 type {kind} repeated (length {length})")
        else:
            result[kind] = value
        last_type, last_length = kind, length
        after_delimiter = False
    return result


def read_var_uint(data):
    """An unsigned little-endian integer of 1, 2, 4 or 8 bytes."""
    if not isinstance(data, (bytes, bytearray)) or len(data) not in (1, 2, 4, 8):
        raise TransitionError(f"cannot read a uint of {len(data) if isinstance(data, (bytes, bytearray)) else 'no'} bytes")
    return int.from_bytes(data, "little")


def write_var_uint(number):
    """The smallest of 1, 2, 4, 8 little-endian bytes that holds `number` (>= 0)."""
    number = int(number)
    if number < 0:
        raise TransitionError(f"cannot write {number} as a uint")
    for size in (1, 2, 4):
        if number < 1 << (8 * size):
            return number.to_bytes(size, "little")
    return number.to_bytes(8, "little")


def _read_fixed(data, fmt, what):
    """struct `fmt` from the start of `data` (longer data is fine, as Buffer.readXxx(0) reads)."""
    if not isinstance(data, (bytes, bytearray)) or len(data) < struct.calcsize(fmt):
        raise TransitionError(f"{what} is missing or too short")
    return struct.unpack_from(fmt, data)[0]


def _base64_bytes(text):
    """Bytes of base64 text, as leniently as Node's Buffer.from(text, "base64"): stops at "=",
    takes the URL alphabet too, skips anything else."""
    text = text.split("=", 1)[0].replace("-", "+").replace("_", "/")
    text = re.sub(r"[^A-Za-z0-9+/]", "", text)
    if len(text) % 4 == 1:
        text = text[:-1]
    return base64.b64decode(text + "=" * (-len(text) % 4))


def uuid_text(data):
    """16 bytes as the reference writes a transition id: lowercase 8-4-4-4-12."""
    data = bytes(data)
    return "-".join(data[start:end].hex() for start, end in ((0, 4), (4, 6), (6, 8), (8, 10), (10, 16)))


def split_transition_control(value):
    """A Characteristic Value Transition Control write (base64) as (read request, update request):
    the values of its 0x01 and 0x02 items, None for one that is not there."""
    if not isinstance(value, str):
        raise TransitionError("a transition control write is a base64 string")
    items = tlv_decode(_base64_bytes(value))
    return items.get(0x01), items.get(0x02)


def decode_transition_update(update):
    """The 0x02 item of a transition control write as {"iid": I, "disabled": True} (no 0x03, or 0x03
    = 0) or the transition the reference keeps (activeTransition without timeMillisOffset), as
    handleTransitionControlUpdateTransition decodes it."""
    configuration = tlv_decode(tlv_decode(update).get(0x01))
    iid = read_var_uint(configuration.get(0x01))
    enable = configuration.get(0x03)
    if enable is not None and not enable:
        raise TransitionError("the enable item (0x03) is empty")
    if enable is None or enable[0] == 0:
        return {"iid": iid, "disabled": True}

    parameters = tlv_decode(configuration.get(0x02))
    curve_configuration = tlv_decode_with_lists(configuration.get(0x05))
    update_interval = configuration.get(0x06)
    update_interval = DEFAULT_UPDATE_INTERVAL if update_interval is None else _read_fixed(update_interval, "<H", "the update interval")
    notify_interval_threshold = _read_fixed(configuration.get(0x08), "<I", "the notify interval threshold")

    transition_id = parameters.get(0x01)
    if transition_id is None:
        raise TransitionError("the transition id (0x01 of the parameters) is missing")
    start = parameters.get(0x02)
    if start is None or len(start) != 8:
        raise TransitionError("the start time (0x02 of the parameters) is not 8 bytes")
    id3 = parameters.get(0x03)

    entries = curve_configuration.get(0x01)
    if entries is None:
        raise TransitionError("the curve has no entries")
    if not isinstance(entries, list):
        # One entry is not a list: the reference walks its bytes and fails (unless it is empty).
        if entries:
            raise TransitionError("a curve of one entry")
        entries = []
    curve = []
    for entry in entries:
        fields = tlv_decode(entry)
        point = {
            "temperature": _read_fixed(fields.get(0x02), "<f", "an entry's temperature"),
            "brightnessAdjustmentFactor": _read_fixed(fields.get(0x01), "<f", "an entry's adjustment factor"),
            "transitionTime": read_var_uint(fields.get(0x03)),
        }
        duration = fields.get(0x04)
        if curve:
            # An entry's duration is how long the one before it holds: it goes there (an absent one
            # clears it), and the first entry's is lost, as in the reference.
            curve[-1].pop("duration", None)
            if duration is not None:
                curve[-1]["duration"] = read_var_uint(duration)
        elif duration is not None:
            read_var_uint(duration)  # read (and checked) all the same
        curve.append(point)

    brightness_iid = curve_configuration.get(0x02)
    if isinstance(brightness_iid, list):
        raise TransitionError("the brightness iid (0x02 of the curve) is a list")
    brightness_range = curve_configuration.get(0x03)
    if isinstance(brightness_range, list):
        raise TransitionError("the brightness range (0x03 of the curve) is a list")
    brightness_range = tlv_decode(brightness_range)
    return {
        "iid": iid,
        "transitionId": uuid_text(transition_id),
        "transitionStartBuffer": start.hex(),
        "id3": None if id3 is None else id3.hex(),
        "brightnessCharacteristicIID": read_var_uint(brightness_iid),
        "brightnessAdjustmentRange": {
            "minBrightnessValue": _read_fixed(brightness_range.get(0x01), "<I", "the range's minimum"),
            "maxBrightnessValue": _read_fixed(brightness_range.get(0x02), "<I", "the range's maximum"),
        },
        "transitionCurve": curve,
        "updateInterval": update_interval,
        "notifyIntervalThreshold": notify_interval_threshold,
        "transitionStartMillis": EPOCH_MILLIS_2001 + int.from_bytes(start, "little"),
    }


def decode_transition(value):
    """What --decode-transition prints: the update of a transition control write (base64)."""
    _, update = split_transition_control(value)
    if update is None:
        raise TransitionError("the write has no update (0x02)")
    transition = decode_transition_update(update)
    return {"disabled": True} if transition.get("disabled") else transition


def supported_transition_configuration(brightness_iid, temperature_iid):
    """Supported Characteristic Value Transition Configuration's value (base64): brightness type 1,
    colour temperature type 2 (handleSupportedTransitionConfigurationRead)."""
    return base64.b64encode(tlv_encode(0x01, [
        tlv_encode(0x01, write_var_uint(brightness_iid), 0x02, 1),
        tlv_encode(0x01, write_var_uint(temperature_iid), 0x02, 2),
    ])).decode()


def transition_parameters(transition):
    """0x01 id, 0x02 start, 0x03 the third parameter when there was a non-empty one."""
    parameters = tlv_encode(0x01, bytes.fromhex(transition["transitionId"].replace("-", "")),
                            0x02, bytes.fromhex(transition["transitionStartBuffer"]))
    if transition.get("id3"):
        parameters += tlv_encode(0x03, bytes.fromhex(transition["id3"]))
    return parameters


def transition_status(transition, time_since_start):
    """0x01 {0x01 iid, 0x02 parameters, 0x03 time since start}, or nothing without a transition
    (buildTransitionControlResponseBuffer)."""
    if transition is None:
        return b""
    return tlv_encode(0x01, tlv_encode(
        0x01, write_var_uint(transition["iid"]),
        0x02, transition_parameters(transition),
        0x03, write_var_uint(time_since_start),
    ))


def update_answer(transition):
    """The answer to an update: 0x02 with the status at time 0, or 0x02 empty (off)."""
    return tlv_encode(0x02, transition_status(transition, 0))


def read_answer(transition, iid):
    """The answer to a read of the current configuration for `iid`
    (handleTransitionControlReadTransition): nothing without a transition."""
    if transition is None:
        return b""
    if transition["iid"] != iid:
        raise TransitionError(f"the transition is for iid {transition['iid']}, not {iid}")
    curve = transition["transitionCurve"]
    entries = [tlv_encode(
        0x01, struct.pack("<f", entry["brightnessAdjustmentFactor"]),
        0x02, struct.pack("<f", entry["temperature"]),
        0x03, write_var_uint(entry["transitionTime"]),
        0x04, write_var_uint((curve[index - 1].get("duration") or 0) if index else 0),
    ) for index, entry in enumerate(curve)]
    brightness_range = transition["brightnessAdjustmentRange"]
    return tlv_encode(0x01, tlv_encode(
        0x01, write_var_uint(transition["iid"]),
        0x02, transition_parameters(transition),
        0x03, 1,
        0x05, tlv_encode(
            0x01, entries,
            0x02, write_var_uint(transition["brightnessCharacteristicIID"]),
            0x03, tlv_encode(0x01, struct.pack("<I", brightness_range["minBrightnessValue"]),
                             0x02, struct.pack("<I", brightness_range["maxBrightnessValue"])),
        ),
        0x06, write_var_uint(transition["updateInterval"]),
        0x08, write_var_uint(transition["notifyIntervalThreshold"]),
    ))


def transition_point(curve, offset, last=None):
    """The two curve entries around `offset` (ms since the curve's start) as
    (point, last) (getCurrentAdaptiveLightingTransitionPoint): point = {"lowerBoundTimeOffset",
    "transitionOffset", "lowerBound", "upperBound"} or None past the end (or before the start);
    `last` = (index, offset before that entry's transition) to start the next search from, None to
    start from the first entry. A search from `last` that finds the offset before it starts over."""
    while True:
        index, lower_offset = last if last is not None else (0, 0)
        found = restart = False
        while index + 1 < len(curve):
            lower, upper = curve[index], curve[index + 1]
            lower_duration = lower.get("duration") or 0
            lower_offset += lower["transitionTime"]
            if offset >= lower_offset:
                if offset <= lower_offset + lower_duration + upper["transitionTime"]:
                    found = True
                    break
            elif last is not None:
                restart = True
                break
            lower_offset += lower_duration
            index += 1
        if restart:
            last = None
            continue
        if not found:
            return None, None
        point = {"lowerBoundTimeOffset": lower_offset, "transitionOffset": offset - lower_offset,
                 "lowerBound": lower, "upperBound": upper}
        return point, (index, lower_offset - lower["transitionTime"])


def _js_divide(numerator, denominator):
    if denominator:
        return numerator / denominator
    if numerator == 0 or math.isnan(numerator):
        return math.nan
    return math.copysign(math.inf, numerator) * (math.copysign(1, denominator))


def _number(value):
    """A characteristic's value as JavaScript's Math would take it (NaN when not a number)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return math.nan


def _js_clamp(low, high, value):
    """Math.max(low, Math.min(high, value)): NaN stays NaN."""
    if math.isnan(value):
        return value
    return max(low, min(high, value))


def curve_temperature(transition, point, brightness, minimum, maximum):
    """(colour temperature, brightness used) at `point` (scheduleNextUpdate's arithmetic): the lower
    entry's values during its duration, linear between the entries after it; brightness clamped to
    the curve's range; round half up; clamped to minimum..maximum. The temperature is None when
    the arithmetic gives no number (a brightness that is not one, a zero-time entry)."""
    lower, upper = point["lowerBound"], point["upperBound"]
    duration = lower.get("duration")
    if duration and point["transitionOffset"] <= duration:
        temperature = lower["temperature"]
        factor = lower["brightnessAdjustmentFactor"]
    else:
        share = _js_divide(point["transitionOffset"] - (duration or 0), upper["transitionTime"])
        temperature = lower["temperature"] + (upper["temperature"] - lower["temperature"]) * share
        factor = lower["brightnessAdjustmentFactor"] + (upper["brightnessAdjustmentFactor"] - lower["brightnessAdjustmentFactor"]) * share
    brightness_range = transition["brightnessAdjustmentRange"]
    multiplier = _js_clamp(brightness_range["minBrightnessValue"], brightness_range["maxBrightnessValue"], _number(brightness))
    raw = temperature + factor * multiplier
    if math.isnan(raw):
        return None, multiplier
    if math.isfinite(raw):
        raw = math.floor(raw + 0.5)  # Math.round: halves go up
    result = _js_clamp(minimum, maximum, raw)
    return (int(result) if math.isfinite(result) else None), multiplier


def _json_number(value):
    """A number for a JSON line: whole floats as ints, NaN and infinities as null."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


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


class AdaptiveLighting:
    """One Lightbulb service's Adaptive Lighting: the transition it follows (the reference's
    activeTransition plus timeMillisOffset), the timer of its next update, where the last curve
    search ended."""

    def __init__(self, driver, aid, service, characteristics):
        self.driver = driver
        self.aid = aid
        self.service = service.get("iid")
        self.control = characteristics[TRANSITION_CONTROL]
        self.supported = characteristics[SUPPORTED_TRANSITION_CONFIGURATION]
        self.temperature = characteristics[COLOR_TEMPERATURE]
        self.brightness = characteristics[BRIGHTNESS]
        self.count = characteristics.get(ACTIVE_TRANSITION_COUNT)
        self.hue = characteristics.get(HUE)
        self.saturation = characteristics.get(SATURATION)
        self.iids = {characteristic.get("iid") for characteristic in service.get("characteristics", [])}
        self.transition = None
        self.timer = None
        self.last_point = None
        # As the reference's configureServices and its read handler set them.
        self.supported["value"] = supported_transition_configuration(self.brightness["iid"], self.temperature["iid"])
        self.control["value"] = ""
        if self.count is not None:
            self.count["value"] = 0

    @classmethod
    def find(cls, driver, accessories):
        """One for every Lightbulb service of `accessories` that can do Adaptive Lighting."""
        found = []
        for accessory in accessories:
            for service in accessory.get("services", []):
                if short_type(service.get("type")) != LIGHTBULB:
                    continue
                characteristics = {}
                for characteristic in service.get("characteristics", []):
                    characteristics.setdefault(short_type(characteristic.get("type")), characteristic)
                needed = (TRANSITION_CONTROL, SUPPORTED_TRANSITION_CONFIGURATION, COLOR_TEMPERATURE, BRIGHTNESS)
                if all(kind in characteristics for kind in needed):
                    found.append(cls(driver, accessory.get("aid"), service, characteristics))
        return found

    def watched_iids(self):
        """The iids whose writes concern it."""
        return [characteristic["iid"] for characteristic in
                (self.control, self.temperature, self.brightness, self.hue, self.saturation) if characteristic is not None]

    # HAP ------------------------------------------------------------------------------------

    def control_value(self):
        """What a read of Transition Control answers now."""
        if self.transition is None:
            return ""
        elapsed = self.driver.clock() - self.transition["timeMillisOffset"] - self.transition["transitionStartMillis"]
        return base64.b64encode(transition_status(self.transition, max(0, elapsed))).decode()

    def write_control(self, value):
        """A controller's write of Transition Control; returns the answer (base64). A value that is
        not a string raises TypeError (-70410, nothing changes); one that cannot be followed turns
        the transition off and raises TransitionError (-70402)."""
        if not isinstance(value, str):
            raise TypeError("a transition control write is a base64 string")
        try:
            read, update = split_transition_control(value)
            answer = b""
            if read is not None:
                answer += read_answer(self.transition, read_var_uint(tlv_decode(read).get(0x01)))
            if update is not None:
                transition = decode_transition_update(update)
                if transition["iid"] not in self.iids:
                    raise TransitionError(f"iid {transition['iid']} is not a characteristic of service {self.service}")
                if transition.get("disabled"):
                    self.disable("disabled by the controller", always=True)
                    answer += tlv_encode(0x02, b"")
                else:
                    self.start(transition)
                    answer += update_answer(self.transition)
        except Exception as error:  # noqa: BLE001  (as the reference's onSet: off, and -70402)
            self.disable("invalid write", always=True, message=str(error))
            raise TransitionError(str(error)) from error
        return base64.b64encode(answer).decode()

    def written(self, iid, old, new):
        """A controller wrote `new` to characteristic `iid` of the service (after it was stored)."""
        if self.transition is None:
            return
        if any(characteristic is not None and iid == characteristic["iid"]
               for characteristic in (self.temperature, self.hue, self.saturation)):
            self.disable("manual write")
        elif iid == self.brightness["iid"]:
            self.brightness_changed(old, new)

    def brightness_changed(self, old, new):
        """A new Brightness value (a write or the device's own): the colour temperature follows at
        once, without moving the timer (the reference's adjustment listener, a dry run)."""
        if self.transition is not None and old != new:
            self.step("brightness", dry_run=True)

    # The transition ---------------------------------------------------------------------------

    def start(self, transition):
        renewed = self.transition is not None
        self._cancel_timer()
        transition["timeMillisOffset"] = self.driver.clock() - transition["transitionStartMillis"]
        self.transition = transition
        self._set(self.count, 1)
        temperature, brightness = self._compute()
        if temperature is None:
            # The reference's update throws on a temperature that is no number (its hue and
            # saturation lookup fails): the write fails, and the transition goes off.
            raise TransitionError("the curve gives no colour temperature now (0/0: an entry of transition time 0 reached without a duration, or a Brightness that is no number)")
        emit("adaptive-lighting", aid=self.aid, service=self.service, on=True, entries=len(transition["transitionCurve"]),
             temperature=None if temperature is False else temperature, brightness=_json_number(brightness), updateInterval=transition["updateInterval"],
             notifyIntervalThreshold=transition["notifyIntervalThreshold"], transitionId=transition["transitionId"],
             start=transition["transitionStartMillis"], renewed=renewed)
        self._follow(temperature, None, dry_run=False)

    def step(self, cause, dry_run=False):
        """The colour temperature for now (the reference's scheduleNextUpdate): set, sent, printed;
        then the next timed one, unless a dry run."""
        if self.transition is None:
            return
        if not dry_run:
            self._cancel_timer()
        temperature, _ = self._compute()
        self._follow(temperature, cause, dry_run)

    def advance(self):
        self.step("advance")

    def disable(self, reason, always=False, message=None):
        """Off (the reference's disableAdaptiveLighting): prints only when a transition was on,
        unless `always`; Active Transition Count 0 (an EVENT) either way."""
        self._cancel_timer()
        was_on = self.transition is not None
        self.transition = None
        self.last_point = None
        self._set(self.count, 0)
        if was_on or always:
            fields = {"message": message} if message is not None else {}
            emit("adaptive-lighting", aid=self.aid, service=self.service, on=False, reason=reason, wasOn=was_on, **fields)

    def forget(self):
        """Drops the transition without a word (the database is replaced)."""
        self._cancel_timer()
        self.transition = None

    def _compute(self):
        """(temperature, brightness used) for the peer's clock now; temperature False past the end."""
        transition = self.transition
        offset = self.driver.clock() - transition["timeMillisOffset"] - transition["transitionStartMillis"]
        point, self.last_point = transition_point(transition["transitionCurve"], offset, self.last_point)
        if point is None:
            return False, None
        minimum = self.temperature.get("minValue", DEFAULT_TEMPERATURE_RANGE[0])
        maximum = self.temperature.get("maxValue", DEFAULT_TEMPERATURE_RANGE[1])
        return curve_temperature(transition, point, self.brightness.get("value"), minimum, maximum)

    def _follow(self, temperature, cause, dry_run):
        if temperature is False:  # past the curve's end
            if not dry_run:
                self.disable("end of the curve")
            return
        if temperature is None:
            # No number (see start): the reference's update throws before it sets anything or
            # its next timer; the transition stays on, without a timer.
            emit("adaptive-lighting-update", aid=self.aid, service=self.service, temperature=None, cause=cause)
            return
        self._set(self.temperature, temperature)
        if cause is not None:
            emit("adaptive-lighting-update", aid=self.aid, service=self.service, temperature=temperature, cause=cause)
        if not dry_run:
            self.timer = self.driver.loop.call_later(self.transition["updateInterval"] / 1000, self.step, "timer")

    def _set(self, characteristic, value):
        """The device's own change: stored, and an EVENT to every subscribed controller."""
        if characteristic is None:
            return
        characteristic["value"] = value
        self.driver.publish({"aid": self.aid, "iid": characteristic["iid"], "value": value})

    def _cancel_timer(self):
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


class ZooDriver(PeerDriver):
    """hap_peer's driver (ready line, pairing lines, parent watch) whose accessories are a
    captured database."""

    def __init__(self, *, database, garbage, **kwargs):
        super().__init__(**kwargs)
        self.database = database
        self.garbage = garbage
        self.hostile = None
        self.refusing_events = False
        self.clock_offset = 0  # milliseconds `advance` added to Adaptive Lighting's clock
        self._find_adaptive_lighting()

    def clock(self):
        """Adaptive Lighting's clock: milliseconds since 1970, plus what `advance` added."""
        return int(time.time() * 1000) + self.clock_offset

    def _find_adaptive_lighting(self):
        self.adaptive = {}  # (aid, iid) of a characteristic it watches -> AdaptiveLighting
        self.lightings = AdaptiveLighting.find(self, self.database.accessories)
        for lighting in self.lightings:
            for iid in lighting.watched_iids():
                self.adaptive[(lighting.aid, iid)] = lighting

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
        for lighting in self.lightings:
            lighting.control["value"] = lighting.control_value()
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
                lighting = self.adaptive.get((aid, iid))
                if lighting is not None and characteristic is lighting.control:
                    characteristic["value"] = lighting.control_value()
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
            answer = None
            if "ev" in query:
                status = self._subscribe(aid, iid, bool(query["ev"]), "ev" in perms, client_addr)
            if "value" in query and status == 0:
                lighting = self.adaptive.get((aid, iid))
                if "pw" not in perms:
                    status = NOT_WRITABLE
                elif lighting is not None and characteristic is lighting.control:
                    emit("write", aid=aid, iid=iid, value=query["value"])
                    try:
                        answer = lighting.write_control(query["value"])
                    except TypeError:
                        status = INVALID_VALUE
                    except TransitionError:
                        status = SERVICE_COMMUNICATION_FAILURE
                else:
                    old = characteristic.get("value")
                    characteristic["value"] = query["value"]
                    emit("write", aid=aid, iid=iid, value=query["value"])
                    self.publish({"aid": aid, "iid": iid, "value": query["value"]}, sender_client_addr=client_addr)
                    if lighting is not None:
                        lighting.written(iid, old, query["value"])
            result = {"aid": aid, "iid": iid, "status": status}
            if answer is not None and status == 0 and query.get("r"):
                result["value"] = answer  # the write-response HAP asks for with "r": true
            results.append(result)
        if all(result["status"] == 0 and "value" not in result for result in results):
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
                old = self.database.characteristics[key].get("value")
                self.database.characteristics[key]["value"] = command["value"]
                self.publish({"aid": key[0], "iid": key[1], "value": command["value"]})
                lighting = self.adaptive.get(key)
                if lighting is not None and key[1] == lighting.brightness["iid"]:
                    lighting.brightness_changed(old, command["value"])  # the device's own change: no manual write
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
                database = Database.load(command["database"])
                for lighting in self.lightings:
                    lighting.forget()
                self.database = database
                self._find_adaptive_lighting()
                self.config_changed()  # c# goes up, in the mDNS advertisement too (with --mdns)
            elif name == "advance":
                milliseconds = command["ms"]
                if isinstance(milliseconds, bool) or not isinstance(milliseconds, (int, float)) or milliseconds < 0:
                    raise ValueError(f"advance needs \"ms\": a number of milliseconds >= 0, not {milliseconds!r}")
                self.clock_offset += int(milliseconds)
                for lighting in self.lightings:
                    lighting.advance()
            else:
                raise ValueError(f"unknown command {name!r}")
            emit("done", command=name, configuration=self.state.config_version)
        except Exception as error:  # noqa: BLE001  (a bad control line is reported, not fatal)
            emit("error", line=line, message=str(error))


def parse_arguments():
    parser = argparse.ArgumentParser(description="Serves a captured accessory database over HAP (127.0.0.1, no mDNS).")
    parser.add_argument("--port", type=int)
    parser.add_argument("--database", help="an aiohomekit fixture (JSON array of accessories)")
    parser.add_argument("--decode-transition", metavar="BASE64",
                        help="print the Adaptive Lighting transition of a Transition Control write as JSON and exit")
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
    if arguments.decode_transition is not None:
        return arguments
    if arguments.port is None or arguments.database is None:
        parser.error("--port and --database are required (unless --decode-transition)")
    if not re.fullmatch(r"\d{3}-\d{2}-\d{3}", arguments.pincode):
        parser.error("--pincode must look like 031-45-154")
    return arguments


def print_transition(value):
    """--decode-transition: one JSON object on stdout; status 1 for a write it cannot decode."""
    try:
        decoded = decode_transition(value)
    except Exception as error:  # noqa: BLE001  (reported, as the peer would answer -70402)
        print(json.dumps({"error": str(error)}), flush=True)
        sys.exit(1)
    print(json.dumps(decoded), flush=True)


def main():
    arguments = parse_arguments()
    if arguments.decode_transition is not None:
        print_transition(arguments.decode_transition)
        return
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
