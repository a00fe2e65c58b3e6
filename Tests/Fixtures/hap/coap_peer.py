#!/usr/bin/env python3
"""Serves a Thread device's captured accessory database over HAP over CoAP (UDP, IPv6), for HomeGate's tests.

Run it with the venv that scripts/setup makes: `.venv/bin/python Tests/Fixtures/hap/coap_peer.py
--port P --database Tests/Fixtures/hap/zoo/nanoleaf_bulb.json [--host ::1] [--pincode 031-45-154]
[--mac ID] [--state FILE] [--mdns [--name NAME] [--category N]] [--verbose]`. `--port 0` takes a
free port (the ready line says which). Sources/Harness/CoAPZooPeer.swift drives it;
coap_crosscheck.py proves it against aiohomekit 4.0.1's own CoAP controller.

aiocoap 0.4.17 is the CoAP layer (message ids, CON retransmission, duplicate detection, the empty
ACK of a slow answer, Block1/Block2); everything HAP is written here, from the HomeKit Accessory
Protocol as aiohomekit's `controller/coap/` speaks it and HAP-BLE's procedures (Apple's HomeKitADK
for what aiohomekit does not do). The database is the zoo's (aiohomekit's IP JSON, loaded with
zoo_peer.py's Database); it must hold one accessory, served as aid 1's GATT database.

Resources (every request a POST; answers 2.04 Changed):
- `/0` identify: empty payload, answered with an empty 2.04 (paired or not, as aiohomekit uses it).
- `/1` pair-setup M1..M6 and `/2` pair-verify M1..M4: plain TLV8 bodies, as /pair-setup and
  /pair-verify over IP. SRP-6a 3072/SHA-512 as Apple's HomeKitADK computes it on the accessory
  side (Sources/HAP/SRPClient.swift has the formulas): u over A and B padded to 384 bytes, K the
  hash of S without its leading zero bytes, M1 over A and B without theirs. The peer draws b
  again until B has no leading zero byte, so B is the same however it is written. aiohomekit
  pads A and S instead; when the controller's A or the shared S starts with a zero byte (2
  exchanges in 256) the two disagree, the peer refuses M3 as such a device would (error 2) and
  prints an `srp-convention` line saying which.
- `/` after pair-verify, keyed by the controller's address and port: ChaCha20-Poly1305 with no
  AAD, nonce 4 zero bytes + 64-bit little-endian counter, a counter per direction from 0; keys by
  HKDF-SHA512 from the X25519 secret: "Control-Salt"/"Control-Write-Encryption-Key" (requests),
  "Control-Salt"/"Control-Read-Encryption-Key" (answers), "Event-Salt"/"Event-Read-Encryption-Key"
  (events). A request from an address with no session, or one whose tag does not verify (the
  session is then forgotten), answers 4.04 Not Found with an empty payload.
- The plaintext is one or more request PDUs: control 0x00, opcode, tid, iid (2 LE), body length
  (2 LE), body; the answer holds one response PDU per request PDU, in order: control 0x02, tid,
  status, body length (2 LE), body. Opcodes: 0x09 the GATT database (iid 0), 0x03 read (answers
  TLV {0x01: value}), 0x02 write (body TLV {0x01: value}; with {0x09: 1} the answer carries the
  value read back), 0x04 timed write (body TLV {0x01: value, 0x08: TTL in units of 100 ms}; answers
  an empty success and holds the write), 0x05 execute write (empty body; carries out the held write
  if its TTL has not run out), 0x0B subscribe, 0x0C unsubscribe. Statuses: 1 unsupported PDU
  (unknown opcode; a read, write or subscription the characteristic's permissions lack; a timed
  write executed after its TTL), 4 invalid instance id, 5 insufficient authentication (a
  non-admin writing the pairings characteristic), 6 invalid request (a value of the wrong length,
  a plain write to a `tw` characteristic, an execute write with nothing held, a cut-off PDU).
- Events: a CoAP PUT (CON unless told `event-type non`) from the peer's port to the address and port
  the session's requests come from, path `/`, payload sealed with the event key and counter;
  plaintext one record per characteristic: 0x00, iid (2 LE), length (2 LE), TLV {0x01: value}.
  A write by one controller is pushed to the other subscribed sessions, not to the writer.
- The pairings characteristic (service 0x55, characteristic 0x50) takes add (3) / remove (4) /
  list (5) pairing TLVs as its written value; its next read answers the M2. Removing a pairing
  forgets that controller's sessions once the write is answered.

Values travel in binary by the characteristic's format: bool 1 byte, uint8/16/32/64 and int
(int32) little-endian, float float32 LE, string UTF-8, data and tlv8 as bytes (the fixtures hold
data as hex, tlv8 as base64). A number outside its format's range (a device's -1 that IP shows as
4294967295) goes as its low bytes, two's complement, as the device sends it; a value the device
does not know yet (null in the fixture) as no bytes. A characteristic captured over IP without a
format (iDevices' switch, Schlage's vendor setting) is served with the format its value's JSON type
gives (bool, int, float, string; data without a value), as a HAP-over-CoAP device declares a
format for every characteristic. A database captured over IP without HAP's Pairing service (0x55) gets one at
the next free iids, as every HAP-over-CoAP device has it.

Standard output carries only JSON lines, one object each, flushed:
  {"event": "ready", "host": "::1", "port": P, "pincode": "...", "id": "AA:BB:CC:DD:EE:FF", "accessories": 1}
  {"event": "identify"}
  {"event": "paired", "controller": "<pairing id>", "admin": true}
  {"event": "unpaired", "controller": "<pairing id>"}
  {"event": "verified", "controller": "<pairing id>", "port": <controller's port>}
  {"event": "write", "aid": 1, "iid": I, "value": V}          (V as the fixture writes it: data as hex)
  {"event": "subscribed", "aid": 1, "iid": I, "ev": true}      (or "ev": false; or "refused": true)
  {"event": "event", "aid": 1, "iid": I, "controller": "...", "answer": "2.03 Valid"}   (an event's fate)
  {"event": "done", "command": "..."}                          (after each control line)
  {"event": "error", "line": "...", "message": "..."}          (a control line it refused)
  {"event": "stopped"}

Control lines on standard input, one JSON object each:
  {"command": "set", "aid": 1, "iid": I, "value": V}   the device changes a value itself (events)
  {"command": "refuse-events", "on": true}             refuse every later subscription (status 1)
  {"command": "drop"}                                  forget every session: later requests get 4.04
  {"command": "misbehave", "mode": M, "seconds": S}    M = silent (every datagram that arrives is
                                                       dropped unread: no ACK, no answer), slow (answers
                                                       S seconds late: aiocoap sends an empty ACK at
                                                       once, the answer as a separate CON), bad-tag (the
                                                       last byte of every sealed answer and event
                                                       flipped); null ends it
  {"command": "garbage", "on": true}                   0x09 answers a body that is no database
  {"command": "add-pairing", "controller": ID, "admin": false}  another controller pairs with the
                                                       device (public_key: 64 hex digits, optional)
  {"command": "break", "step": S}                      step S fails once, the next time it comes:
                                                       verify (pair-verify M1 answered with an
                                                       authentication error), database (0x09
                                                       answers garbage) or values (a request
                                                       with a read answered 5.00); prints
                                                       {"event": "broken", "step": S}
  {"command": "garbage-datagrams", "count": N}         N datagrams of random bytes to every session's
                                                       controller, from the peer's port
  {"command": "event-type", "type": "non"}             events as NON (or "con", the default)
mDNS is off unless --mdns is given: then python-zeroconf announces `_hap._udp.local.` with HAP's
TXT keys (c#, ff, id, md, pv, s#, sf, ci), on the bound address; use it only inside a network
namespace a test made, never on the machine's real interfaces.

SIGTERM or SIGINT stops it; it also stops by itself when the process that started it is gone.
"""

import argparse
import asyncio
import base64
import hashlib
import json
import logging
import os
import random
import re
import secrets
import signal
import socket
import struct
import sys
import tempfile
import time
import uuid

# aiocoap sets SO_REUSEPORT on its UDP sockets, and with it the kernel's choice of a free port
# (port 0) hands out ports other such sockets hold (141 of 3,000 here): two peers on one port,
# each getting part of the other's datagrams (seen in scripts/test: a pairing meant for one peer
# reached the other). AIOCOAP_REUSE_PORT=0, aiocoap's own switch, turns it off for the peer, whose
# port is then its own. (aiohomekit's client needs it on; coap_crosscheck.py leaves it on.)
os.environ["AIOCOAP_REUSE_PORT"] = "0"

from aiocoap import Context, Message, Reliable, Unreliable, resource
from aiocoap.numbers.codes import Code
from aiocoap.transports import udp6
from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives.asymmetric import ed25519, x25519
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat
from pyhap.hap_crypto import hap_hkdf

from hap_peer import emit
from zoo_peer import Database

logger = logging.getLogger("coap_peer")

# --- TLV8 -------------------------------------------------------------------------------------


def tlv(kind, value):
    """One TLV8 item; values over 255 bytes continue in items of the same type."""
    value = bytes(value)
    if not value:
        return bytes([kind, 0])
    return b"".join(bytes([kind, len(value[offset:offset + 255])]) + value[offset:offset + 255]
                    for offset in range(0, len(value), 255))


def tlv_items(data):
    """TLV8 items as (type, value), fragments of one value joined."""
    items = []
    offset = 0
    previous_full = False
    while offset < len(data):
        if offset + 2 > len(data):
            raise ValueError("TLV8 item cut off after its type")
        kind, length = data[offset], data[offset + 1]
        value = data[offset + 2:offset + 2 + length]
        if len(value) != length:
            raise ValueError(f"TLV8 item of type {kind} says {length} bytes, {len(value)} follow")
        if previous_full and items and items[-1][0] == kind:
            items[-1] = (kind, items[-1][1] + value)
        else:
            items.append((kind, value))
        previous_full = length == 255
        offset += 2 + length
    return items


def tlv_dict(data):
    return {kind: value for kind, value in tlv_items(data)}


def tlv_sequence(items):
    """HAP-BLE's list of structures: the items separated by an empty item of type 0."""
    return b"\x00\x00".join(items)


# --- Values and the GATT database -------------------------------------------------------------

# HAP-BLE's GATT presentation format codes and units (aiohomekit structs.py reads them back).
FORMATS = {"bool": 0x01, "uint8": 0x04, "uint16": 0x06, "uint32": 0x08, "uint64": 0x0A, "int": 0x10,
           "float": 0x14, "string": 0x19, "data": 0x1B, "tlv8": 0x1B}
PACKING = {"uint8": "<B", "uint16": "<H", "uint32": "<I", "uint64": "<Q", "int": "<i", "float": "<f"}
UNITS = {"celsius": 0x272F, "arcdegrees": 0x2763, "percentage": 0x27AD, "lux": 0x2731, "seconds": 0x2703}
UNITLESS = 0x2700
# Characteristic properties: secure (paired) read and write, events in the connected and the
# disconnected state (both, as the Wemo Stage's database sets them), additional authorization
# data, timed write, hidden.
PROPERTY_BITS = {"pr": 0x0010, "pw": 0x0020, "ev": 0x0180, "aa": 0x0004, "tw": 0x0008, "hd": 0x0040}
HEX = re.compile(r"(?:[0-9A-Fa-f]{2})*")

PAIRINGS_SERVICE, PAIRINGS_CHARACTERISTIC = 0x55, 0x50
# Steps the `break` control makes fail once: pair-verify, the database (0x09), a read of values.
BREAKABLE_STEPS = ("verify", "database", "values")


def full_uuid(text):
    """A HAP type as an integer: short forms expand under Apple's base UUID."""
    text = text.upper()
    if "-" not in text and len(text) <= 8:
        text = text.rjust(8, "0") + "-0000-1000-8000-0026BB765291"
    return uuid.UUID(text).int


APPLE_BASE = uuid.UUID("00000000-0000-1000-8000-0026BB765291").int


def type_bytes(text):
    """A type as the database carries it (as real devices do, e.g. Wemo Stage and Eve Energy in
    aiohomekit's tests): Apple's types as their short number in as few little-endian bytes as it
    takes (0x3E: `3e`, 0x220: `20 02`), any other UUID as all 16 bytes little-endian."""
    number = full_uuid(text)
    if number & ((1 << 96) - 1) == APPLE_BASE:
        short = number >> 96
        return short.to_bytes(max(1, (short.bit_length() + 7) // 8), "little")
    return number.to_bytes(16, "little")


def data_bytes(text, prefer_hex):
    """A data/tlv8 value from the fixture: hex (how aiohomekit captures data) or base64."""
    if prefer_hex and HEX.fullmatch(text):
        return bytes.fromhex(text)
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        if HEX.fullmatch(text):
            return bytes.fromhex(text)
        raise ValueError(f"{text[:40]!r} is neither hex nor base64") from None


def encode_value(fmt, value):
    """A JSON value as the bytes HAP over CoAP carries for format `fmt`."""
    if value is None:
        return b""
    if fmt == "bool":
        return b"\x01" if value else b"\x00"
    if fmt == "float":
        return struct.pack("<f", float(value))
    if fmt in PACKING:
        # A number outside the format's range goes as the device sends it: its low bytes, two's
        # complement (SimpleConnect's fan holds -1 in an `int` that IP shows as 4294967295).
        width = struct.calcsize(PACKING[fmt])
        return (int(value) & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
    if fmt == "string":
        return str(value).encode("utf-8")
    if fmt in ("data", "tlv8"):
        return data_bytes(value, prefer_hex=fmt == "data")
    # No format in the database: the value's own JSON type decides.
    if isinstance(value, bool):
        return b"\x01" if value else b"\x00"
    if isinstance(value, int):
        return struct.pack("<i", value)
    if isinstance(value, float):
        return struct.pack("<f", value)
    return str(value).encode("utf-8")


def decode_value(fmt, raw):
    """Bytes a controller wrote, as the JSON value the fixture would hold; ValueError if they do
    not fit the format."""
    if fmt == "bool":
        if raw not in (b"\x00", b"\x01"):
            raise ValueError(f"a bool is one byte 0 or 1, not {raw.hex()}")
        return raw == b"\x01"
    if fmt in PACKING:
        if len(raw) != struct.calcsize(PACKING[fmt]):
            raise ValueError(f"{fmt} takes {struct.calcsize(PACKING[fmt])} bytes, not {len(raw)}")
        return struct.unpack(PACKING[fmt], raw)[0]
    if fmt == "string":
        return raw.decode("utf-8")
    if fmt == "data":
        return raw.hex()
    if fmt == "tlv8":
        return base64.b64encode(raw).decode("ascii")
    return raw.hex()


def characteristic_signature(characteristic):
    """One characteristic of the 0x09 database (aiohomekit's Pdu09Characteristic)."""
    iid = characteristic["iid"]
    fmt = characteristic.get("format")
    properties = 0
    for permission in characteristic.get("perms") or []:
        properties |= PROPERTY_BITS.get(permission, 0)
    fields = [tlv(0x04, type_bytes(characteristic["type"])),
              tlv(0x05, struct.pack("<H", iid)),
              tlv(0x0A, struct.pack("<H", properties))]
    if characteristic.get("description"):
        fields.append(tlv(0x0B, characteristic["description"].encode("utf-8")))
    if fmt in FORMATS:
        unit = UNITS.get(characteristic.get("unit"), UNITLESS)
        fields.append(tlv(0x0C, struct.pack("<BbHBH", FORMATS[fmt], 0, unit, 1, 0)))
    if fmt in PACKING and "minValue" in characteristic and "maxValue" in characteristic:
        try:
            pair = [float(characteristic[key]) if fmt == "float" else int(characteristic[key]) for key in ("minValue", "maxValue")]
            fields.append(tlv(0x0D, struct.pack(PACKING[fmt], pair[0]) + struct.pack(PACKING[fmt], pair[1])))
        except (struct.error, OverflowError):
            logger.warning("iid %d: range %s..%s does not fit %s; served without it", iid,
                           characteristic["minValue"], characteristic["maxValue"], fmt)
    if fmt in PACKING and characteristic.get("minStep"):
        fields.append(tlv(0x0E, encode_value(fmt, characteristic["minStep"])))
    if characteristic.get("valid-values"):
        fields.append(tlv(0x11, bytes(characteristic["valid-values"])))
    if characteristic.get("valid-values-range"):
        fields.append(tlv(0x12, bytes(characteristic["valid-values-range"])))
    return b"".join(fields)


def service_signature(service):
    characteristics = tlv_sequence([tlv(0x13, characteristic_signature(c)) for c in service.get("characteristics", [])])
    properties = (0x0001 if service.get("primary") else 0) | (0x0002 if service.get("hidden") else 0)
    fields = [tlv(0x06, type_bytes(service["type"])),
              tlv(0x07, struct.pack("<H", service["iid"])),
              tlv(0x14, characteristics),
              tlv(0x0F, struct.pack("<H", properties))]
    if service.get("linked"):
        fields.append(tlv(0x10, b"".join(struct.pack("<H", linked) for linked in service["linked"])))
    return b"".join(fields)


def gatt_database(accessory):
    """The body of the 0x09 answer: aiohomekit's Pdu09Database for one accessory."""
    services = tlv_sequence([tlv(0x15, service_signature(service)) for service in accessory.get("services", [])])
    return tlv(0x18, tlv(0x19, tlv(0x1A, struct.pack("<H", accessory.get("aid", 1))) + tlv(0x16, services)))


def with_pairing_service(accessory):
    """The accessory with HAP's Pairing service (0x55: pair-setup 0x4C, pair-verify 0x4E, features
    0x4F, pairings 0x50), which every HAP-over-CoAP device has (controllers manage pairings by
    writing 0x50), added at the next free iids when a database captured over IP lacks it."""
    services = accessory.get("services", [])
    if any(full_uuid(service["type"]) == full_uuid(f"{PAIRINGS_SERVICE:X}") for service in services):
        return accessory
    iids = [service.get("iid", 0) for service in services] + \
        [c.get("iid", 0) for service in services for c in service.get("characteristics", [])]
    first = max(iids + [0]) + 1
    characteristics = [
        {"iid": first + 1, "type": "4C", "format": "tlv8", "perms": ["pr", "pw"]},
        {"iid": first + 2, "type": "4E", "format": "tlv8", "perms": ["pr", "pw"]},
        {"iid": first + 3, "type": "4F", "format": "uint8", "perms": ["pr"], "value": 0},
        {"iid": first + 4, "type": "50", "format": "tlv8", "perms": ["pr", "pw"]},
    ]
    return dict(accessory, services=services + [{"iid": first, "type": "55", "characteristics": characteristics}])


def declared_format(characteristic):
    """The format a characteristic is served with. A HAP-over-CoAP device declares one for every
    characteristic (the GATT presentation format descriptor); a database captured over IP may
    lack it (iDevices' switch, Schlage's vendor setting), so the value's own JSON type decides, as
    the device's firmware would have typed it: bool, int, float or string (data without a value)."""
    if characteristic.get("format"):
        return characteristic["format"]
    value = characteristic.get("value")
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if -(1 << 31) <= value < (1 << 31) else "uint64"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "data"


class Accessory:
    """The one accessory of a CoAP database, by iid, with its pairings characteristic."""

    def __init__(self, database):
        if len(database.accessories) != 1:
            raise ValueError(f"a CoAP accessory is one accessory; the database has {len(database.accessories)}")
        self.accessory = with_pairing_service(database.accessories[0])
        for service in self.accessory.get("services", []):
            for characteristic in service.get("characteristics", []):
                characteristic["format"] = declared_format(characteristic)
        self.aid = self.accessory.get("aid", 1)
        self.characteristics = {}
        self.pairings_iid = None
        for service in self.accessory.get("services", []):
            for characteristic in service.get("characteristics", []):
                iid = characteristic.get("iid")
                if not isinstance(iid, int) or not 0 < iid <= 0xFFFF:
                    raise ValueError(f"iid {iid!r} does not fit HAP over CoAP's 16 bits")
                self.characteristics.setdefault(iid, characteristic)
                if full_uuid(service["type"]) == full_uuid(f"{PAIRINGS_SERVICE:X}") and \
                        full_uuid(characteristic["type"]) == full_uuid(f"{PAIRINGS_CHARACTERISTIC:X}"):
                    self.pairings_iid = iid
        self.signature = gatt_database(self.accessory)

    def permissions(self, iid):
        return self.characteristics[iid].get("perms") or []


# --- Pairing state ----------------------------------------------------------------------------


class State:
    """The accessory's identity and pairings, in a JSON file (mode 0600) that a restart keeps."""

    def __init__(self, path, mac):
        self.path = path
        self.pairings = {}  # pairing id -> {"public_key": bytes, "admin": bool}
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                saved = json.load(handle)
            self.device_id = saved["id"]
            self.private_key = ed25519.Ed25519PrivateKey.from_private_bytes(bytes.fromhex(saved["private_key"]))
            self.pairings = {name: {"public_key": bytes.fromhex(entry["public_key"]), "admin": entry["admin"]}
                             for name, entry in saved["pairings"].items()}
        else:
            self.device_id = mac or ":".join(f"{byte:02X}" for byte in secrets.token_bytes(6))
            self.private_key = ed25519.Ed25519PrivateKey.generate()
            self.save()

    @property
    def public_key(self):
        return self.private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    @property
    def paired(self):
        return bool(self.pairings)

    def save(self):
        saved = {"id": self.device_id,
                 "private_key": self.private_key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()).hex(),
                 "pairings": {name: {"public_key": entry["public_key"].hex(), "admin": entry["admin"]}
                              for name, entry in self.pairings.items()}}
        temporary = self.path + ".tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(saved, handle)
        os.replace(temporary, self.path)


# --- SRP-6a (RFC 5054 3072-bit group, SHA-512), the accessory's side --------------------------

N = int("FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF"
        "9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB"
        "5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD"
        "961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3BE39E772C180E86039B27"
        "83A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA051015728E5A8AAAC42DAD33170D04"
        "507A33A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7ABF5AE8CDB0933D71E8C94E04A25619D"
        "CEE3D2261AD2EE6BF12FFA06D98A0864D87602733EC86A64521F2B18177B200CBBE117577A615D6C770988C0BAD946E208E24F"
        "A074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF", 16)
G = 5
PAD = 384


def sha512(*parts):
    return hashlib.sha512(b"".join(parts)).digest()


def padded(number):
    return number.to_bytes(PAD, "big")


def minimal(number):
    """The big-endian bytes of `number` without leading zero bytes."""
    return number.to_bytes(max(1, (number.bit_length() + 7) // 8), "big")


class SRPServer:
    """One pair-setup's SRP, as Apple's HomeKitADK computes it on the accessory side."""

    def __init__(self, pincode):
        self.salt = secrets.token_bytes(16)
        x = int.from_bytes(sha512(self.salt, sha512(b"Pair-Setup:" + pincode.encode())), "big")
        self.verifier = pow(G, x, N)
        k = int.from_bytes(sha512(padded(N), padded(G)), "big")
        while True:  # a B without a leading zero byte reads the same padded or not
            self.b = int.from_bytes(secrets.token_bytes(32), "big")
            self.B = (k * self.verifier + pow(G, self.b, N)) % N
            if self.B >> (8 * (PAD - 1)):
                break
        self.key = None
        self.disagreement = None

    def verify(self, a_bytes, proof):
        """The accessory's proof (M2) if the controller's (M1) is right, else None (then
        `disagreement` says where a controller that pads A or S would have computed another M1)."""
        A = int.from_bytes(a_bytes, "big")
        if A % N == 0:
            return None
        u = int.from_bytes(sha512(padded(A), padded(self.B)), "big")
        S = pow(A * pow(self.verifier, u, N), self.b, N)
        key = sha512(minimal(S))
        group = bytes(x ^ y for x, y in zip(sha512(minimal(N)), sha512(minimal(G))))
        expected = sha512(group, sha512(b"Pair-Setup"), self.salt, minimal(A), minimal(self.B), key)
        if not secrets.compare_digest(expected, bytes(proof)):
            leading_zero = [name for name, number in (("A", A), ("S", S)) if number >> (8 * (PAD - 1)) == 0]
            self.disagreement = leading_zero or None
            return None
        self.key = key
        return sha512(padded(A), expected, key)


# --- HAP TLV8 pairing types and errors ---------------------------------------------------------

T_METHOD, T_IDENTIFIER, T_SALT, T_PUBLIC_KEY, T_PROOF, T_ENCRYPTED, T_STATE, T_ERROR = 0, 1, 2, 3, 4, 5, 6, 7
T_SIGNATURE, T_PERMISSIONS, T_SEPARATOR = 0x0A, 0x0B, 0xFF
E_UNKNOWN, E_AUTHENTICATION, E_UNAVAILABLE = 1, 2, 6


def nonce(label):
    return b"\x00\x00\x00\x00" + label


def counter_nonce(counter):
    return struct.pack("<4xQ", counter)


def state_error(state, error):
    return tlv(T_STATE, bytes([state])) + tlv(T_ERROR, bytes([error]))


# --- Sessions -------------------------------------------------------------------------------------

STATUS_SUCCESS, STATUS_UNSUPPORTED, STATUS_INVALID_IID, STATUS_AUTHENTICATION, STATUS_INVALID = 0, 1, 4, 5, 6


class Session:
    """One verified controller, by its address and port."""

    def __init__(self, shared, controller, admin, remote):
        self.read = ChaCha20Poly1305(hap_hkdf(shared, b"Control-Salt", b"Control-Write-Encryption-Key"))
        self.write = ChaCha20Poly1305(hap_hkdf(shared, b"Control-Salt", b"Control-Read-Encryption-Key"))
        self.events = ChaCha20Poly1305(hap_hkdf(shared, b"Event-Salt", b"Event-Read-Encryption-Key"))
        self.read_counter = self.write_counter = self.event_counter = 0
        self.controller = controller
        self.admin = admin
        self.remote = remote
        self.subscriptions = set()
        self.held_writes = {}  # iid -> (request TLV, deadline)
        self.pairings_answer = None

    def open(self, sealed):
        plain = self.read.decrypt(counter_nonce(self.read_counter), sealed, b"")
        self.read_counter += 1
        return plain

    def seal(self, plain):
        sealed = self.write.encrypt(counter_nonce(self.write_counter), plain, b"")
        self.write_counter += 1
        return sealed

    def seal_event(self, plain):
        sealed = self.events.encrypt(counter_nonce(self.event_counter), plain, b"")
        self.event_counter += 1
        return sealed


def key_of(remote):
    """A session's key: the controller's address and port."""
    return tuple(remote.sockaddr[:2])


class Misbehaviour:
    mode = None
    seconds = 0.0


MISBEHAVIOUR = Misbehaviour()
_datagram_received = udp6.MessageInterfaceUDP6.datagram_msg_received


def _maybe_silent(self, data, ancdata, flags, address):
    if MISBEHAVIOUR.mode == "silent":
        return  # dropped unread: no ACK, no answer
    _datagram_received(self, data, ancdata, flags, address)


udp6.MessageInterfaceUDP6.datagram_msg_received = _maybe_silent


def spoil(sealed):
    """The sealed bytes as sent: with the tag's last byte flipped while misbehaving `bad-tag`."""
    if MISBEHAVIOUR.mode == "bad-tag" and sealed:
        return sealed[:-1] + bytes([sealed[-1] ^ 0xFF])
    return sealed


# --- The accessory server ---------------------------------------------------------------------


class Peer:
    def __init__(self, arguments, accessory, state):
        self.arguments = arguments
        self.accessory = accessory
        self.state = state
        self.sessions = {}
        self.setups = {}  # remote key -> {"srp": SRPServer}
        self.verifies = {}  # remote key -> pending pair-verify material
        self.refusing_events = False
        self.garbage = False
        self.event_type = Reliable
        self.context = None
        self.port = None
        self.zeroconf = None
        self.stopping = asyncio.Event()
        self.broken_steps = set()

    # Pair-setup ---------------------------------------------------------------------------------

    def pair_setup(self, remote, body):
        request = tlv_dict(body)
        step = request.get(T_STATE, b"\x00")[0]
        if self.state.paired:
            return state_error(step + 1, E_UNAVAILABLE)
        if step == 1:
            srp = SRPServer(self.arguments.pincode)
            self.setups = {remote: {"srp": srp}}  # a new pair-setup replaces any earlier one
            return tlv(T_STATE, b"\x02") + tlv(T_SALT, srp.salt) + tlv(T_PUBLIC_KEY, padded(srp.B))
        setup = self.setups.get(remote)
        if setup is None:
            return state_error(step + 1, E_UNKNOWN)
        if step == 3:
            proof = setup["srp"].verify(request.get(T_PUBLIC_KEY, b""), request.get(T_PROOF, b""))
            if proof is None:
                if setup["srp"].disagreement:
                    emit("srp-convention", leading_zero=setup["srp"].disagreement)
                self.setups.pop(remote, None)
                return state_error(4, E_AUTHENTICATION)
            return tlv(T_STATE, b"\x04") + tlv(T_PROOF, proof)
        if step == 5 and setup["srp"].key:
            return self._pair_setup_exchange(remote, setup["srp"].key, request.get(T_ENCRYPTED, b""))
        return state_error(step + 1, E_UNKNOWN)

    def _pair_setup_exchange(self, remote, key, sealed):
        self.setups.pop(remote, None)
        encryption_key = hap_hkdf(key, b"Pair-Setup-Encrypt-Salt", b"Pair-Setup-Encrypt-Info")
        cipher = ChaCha20Poly1305(encryption_key)
        try:
            sub = tlv_dict(cipher.decrypt(nonce(b"PS-Msg05"), bytes(sealed), b""))
            controller, controller_key = sub[T_IDENTIFIER], sub[T_PUBLIC_KEY]
            material = hap_hkdf(key, b"Pair-Setup-Controller-Sign-Salt", b"Pair-Setup-Controller-Sign-Info") + controller + controller_key
            ed25519.Ed25519PublicKey.from_public_bytes(controller_key).verify(sub[T_SIGNATURE], material)
        except (InvalidTag, InvalidSignature, KeyError, ValueError):
            return state_error(6, E_AUTHENTICATION)
        accessory_id = self.state.device_id.encode()
        material = hap_hkdf(key, b"Pair-Setup-Accessory-Sign-Salt", b"Pair-Setup-Accessory-Sign-Info") + accessory_id + self.state.public_key
        reply = tlv(T_IDENTIFIER, accessory_id) + tlv(T_PUBLIC_KEY, self.state.public_key) + \
            tlv(T_SIGNATURE, self.state.private_key.sign(material))
        name = controller.decode("utf-8", "replace")
        self.state.pairings[name] = {"public_key": bytes(controller_key), "admin": True}
        self.state.save()
        emit("paired", controller=name, admin=True)
        self.announce()
        return tlv(T_STATE, b"\x06") + tlv(T_ENCRYPTED, cipher.encrypt(nonce(b"PS-Msg06"), reply, b""))

    # Pair-verify --------------------------------------------------------------------------------

    def pair_verify(self, remote, body):
        request = tlv_dict(body)
        step = request.get(T_STATE, b"\x00")[0]
        if step == 1:
            if not self.state.paired or self.broken("verify"):
                return state_error(2, E_AUTHENTICATION)
            controller_public = bytes(request.get(T_PUBLIC_KEY, b""))
            try:
                own = x25519.X25519PrivateKey.generate()
                shared = own.exchange(x25519.X25519PublicKey.from_public_bytes(controller_public))
            except ValueError:
                return state_error(2, E_AUTHENTICATION)
            own_public = own.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
            accessory_id = self.state.device_id.encode()
            signature = self.state.private_key.sign(own_public + accessory_id + controller_public)
            key = hap_hkdf(shared, b"Pair-Verify-Encrypt-Salt", b"Pair-Verify-Encrypt-Info")
            self.verifies[remote] = {"shared": shared, "key": key, "own": own_public, "controller": controller_public}
            sealed = ChaCha20Poly1305(key).encrypt(nonce(b"PV-Msg02"), tlv(T_IDENTIFIER, accessory_id) + tlv(T_SIGNATURE, signature), b"")
            return tlv(T_STATE, b"\x02") + tlv(T_PUBLIC_KEY, own_public) + tlv(T_ENCRYPTED, sealed)
        pending = self.verifies.pop(remote, None)
        if step != 3 or pending is None:
            return state_error(step + 1, E_UNKNOWN)
        try:
            sub = tlv_dict(ChaCha20Poly1305(pending["key"]).decrypt(nonce(b"PV-Msg03"), bytes(request.get(T_ENCRYPTED, b"")), b""))
            name = sub[T_IDENTIFIER].decode("utf-8", "replace")
            pairing = self.state.pairings[name]
            ed25519.Ed25519PublicKey.from_public_bytes(pairing["public_key"]).verify(
                sub[T_SIGNATURE], pending["controller"] + sub[T_IDENTIFIER] + pending["own"])
        except (InvalidTag, InvalidSignature, KeyError, ValueError):
            return state_error(4, E_AUTHENTICATION)
        return tlv(T_STATE, b"\x04"), (pending["shared"], name, pairing["admin"])

    # The secure resource ------------------------------------------------------------------------

    def answer_pdus(self, session, plain):
        """The response PDUs for the request PDUs in `plain`, and what to do after answering."""
        answers = []
        after = []
        offset = 0
        while offset < len(plain):
            header = plain[offset:offset + 7]
            if len(header) < 7 or len(plain) - offset - 7 < struct.unpack("<H", header[5:7])[0]:
                tid = plain[offset + 2] if len(plain) > offset + 2 else 0
                answers.append(struct.pack("<BBBH", 0x02, tid, STATUS_INVALID, 0))
                break
            _, opcode, tid, iid, length = struct.unpack("<BBBHH", header)
            body = plain[offset + 7:offset + 7 + length]
            offset += 7 + length
            status, reply = self.procedure(session, opcode, iid, bytes(body), after)
            answers.append(struct.pack("<BBBH", 0x02, tid, status, len(reply)) + reply)
        return b"".join(answers), after

    def procedure(self, session, opcode, iid, body, after):
        if opcode == 0x09:
            if self.garbage or self.broken("database"):
                return STATUS_SUCCESS, b"\x42\x05hello"  # a type aiohomekit's database has no place for
            return STATUS_SUCCESS, self.accessory.signature
        if opcode not in (0x02, 0x03, 0x04, 0x05, 0x0B, 0x0C):
            return STATUS_UNSUPPORTED, b""
        if iid not in self.accessory.characteristics:
            return STATUS_INVALID_IID, b""
        permissions = self.accessory.permissions(iid)
        characteristic = self.accessory.characteristics[iid]
        if opcode == 0x03:
            if "pr" not in permissions:
                return STATUS_UNSUPPORTED, b""
            return STATUS_SUCCESS, self.read_value(session, iid)
        if opcode in (0x0B, 0x0C):
            return self.subscribe(session, iid, opcode == 0x0B, "ev" in permissions), b""
        if opcode == 0x04:
            if "pw" not in permissions:
                return STATUS_UNSUPPORTED, b""
            try:
                request = tlv_dict(body)
            except ValueError:
                return STATUS_INVALID, b""
            ttl = request.get(0x08, b"")
            if 0x01 not in request or len(ttl) != 1 or ttl[0] == 0:
                return STATUS_INVALID, b""
            session.held_writes[iid] = (body, time.monotonic() + ttl[0] * 0.1)
            return STATUS_SUCCESS, b""
        if opcode == 0x05:
            held = session.held_writes.pop(iid, None)
            if held is None:
                return STATUS_INVALID, b""
            if time.monotonic() > held[1]:
                return STATUS_UNSUPPORTED, b""  # HomeKitADK's answer to an expired timed write
            return self.write_value(session, iid, characteristic, held[0], after)
        if "pw" not in permissions:
            return STATUS_UNSUPPORTED, b""
        if "tw" in permissions:
            return STATUS_INVALID, b""  # a `tw` characteristic takes timed writes only
        return self.write_value(session, iid, characteristic, body, after)

    def read_value(self, session, iid):
        if iid == self.accessory.pairings_iid:
            answer, session.pairings_answer = session.pairings_answer or b"", None
            return tlv(0x01, answer)
        characteristic = self.accessory.characteristics[iid]
        return tlv(0x01, encode_value(characteristic.get("format"), characteristic.get("value")))

    def write_value(self, session, iid, characteristic, body, after):
        try:
            request = tlv_dict(body)
            raw = request[0x01]
        except (ValueError, KeyError):
            return STATUS_INVALID, b""
        if iid == self.accessory.pairings_iid:
            status = self.pairings(session, raw, after)
        else:
            try:
                value = decode_value(characteristic.get("format"), raw)
            except (ValueError, UnicodeDecodeError):
                return STATUS_INVALID, b""
            characteristic["value"] = value
            emit("write", aid=self.accessory.aid, iid=iid, value=value)
            after.append(lambda: self.send_events(iid, value, excluding=session))
            status = STATUS_SUCCESS
        if status != STATUS_SUCCESS:
            return status, b""
        if request.get(0x09) == b"\x01":
            return STATUS_SUCCESS, self.read_value(session, iid)
        return STATUS_SUCCESS, b""

    def subscribe(self, session, iid, on, supported):
        if on and (self.refusing_events or not supported):
            emit("subscribed", aid=self.accessory.aid, iid=iid, ev=True, refused=True)
            return STATUS_UNSUPPORTED
        (session.subscriptions.add if on else session.subscriptions.discard)(iid)
        emit("subscribed", aid=self.accessory.aid, iid=iid, ev=on)
        return STATUS_SUCCESS

    # The pairings characteristic -----------------------------------------------------------------

    def pairings(self, session, raw, after):
        """Carries out an add/remove/list pairing request; its M2 waits for the next read."""
        if not session.admin:
            session.pairings_answer = state_error(2, E_AUTHENTICATION)
            return STATUS_AUTHENTICATION
        try:
            request = tlv_dict(raw)
            method = request[T_METHOD][0]
        except (ValueError, KeyError, IndexError):
            return STATUS_INVALID
        if method == 3:
            name = request.get(T_IDENTIFIER, b"").decode("utf-8", "replace")
            key = bytes(request.get(T_PUBLIC_KEY, b""))
            admin = bool(request.get(T_PERMISSIONS, b"\x00")[:1] == b"\x01")
            existing = self.state.pairings.get(name)
            if existing and existing["public_key"] != key or len(key) != 32:
                session.pairings_answer = state_error(2, E_UNKNOWN)
                return STATUS_SUCCESS
            self.state.pairings[name] = {"public_key": key, "admin": admin}
            self.state.save()
            emit("paired", controller=name, admin=admin)
            session.pairings_answer = tlv(T_STATE, b"\x02")
        elif method == 4:
            name = request.get(T_IDENTIFIER, b"").decode("utf-8", "replace")
            if self.state.pairings.pop(name, None) is not None:
                self.state.save()
                emit("unpaired", controller=name)
                after.append(lambda: self.forget_controller(name))
                self.announce()
            session.pairings_answer = tlv(T_STATE, b"\x02")
        elif method == 5:
            entries = [tlv(T_IDENTIFIER, name.encode()) + tlv(T_PUBLIC_KEY, entry["public_key"]) +
                       tlv(T_PERMISSIONS, b"\x01" if entry["admin"] else b"\x00")
                       for name, entry in self.state.pairings.items()]
            session.pairings_answer = tlv(T_STATE, b"\x02") + tlv(T_SEPARATOR, b"").join(entries)
        else:
            return STATUS_INVALID
        return STATUS_SUCCESS

    def broken(self, step):
        """Whether `step` fails this time (the `break` control: once)."""
        if step not in self.broken_steps:
            return False
        self.broken_steps.discard(step)
        emit("broken", step=step)
        return True

    def forget_controller(self, name):
        for key, session in list(self.sessions.items()):
            if session.controller == name:
                del self.sessions[key]

    # Events -------------------------------------------------------------------------------------

    def send_events(self, iid, value, excluding=None):
        characteristic = self.accessory.characteristics[iid]
        body = tlv(0x01, encode_value(characteristic.get("format"), value))
        record = struct.pack("<BHH", 0x00, iid, len(body)) + body
        for session in list(self.sessions.values()):
            if session is excluding or iid not in session.subscriptions:
                continue
            host, port = session.remote
            message = Message(code=Code.PUT, transport_tuning=self.event_type, payload=spoil(session.seal_event(record)),
                              uri=f"coap://[{host}]:{port}/")
            asyncio.ensure_future(self._deliver(message, iid, session.controller))

    async def _deliver(self, message, iid, controller):
        try:
            response = await self.context.request(message).response
            answer = str(response.code)
        except Exception as error:  # noqa: BLE001  (a controller gone: reported, not fatal)
            answer = f"failed: {error.__class__.__name__}"
        emit("event", aid=self.accessory.aid, iid=iid, controller=controller, answer=answer)

    # Controls -----------------------------------------------------------------------------------

    def control(self, line):
        try:
            command = json.loads(line)
            name = command["command"]
            if name == "set":
                iid = command["iid"]
                if command.get("aid", self.accessory.aid) != self.accessory.aid or iid not in self.accessory.characteristics:
                    raise ValueError(f"no characteristic {command.get('aid')}.{iid}")
                characteristic = self.accessory.characteristics[iid]
                encode_value(characteristic.get("format"), command["value"])  # checks it fits the format
                characteristic["value"] = command["value"]
                self.send_events(iid, command["value"])
            elif name == "refuse-events":
                self.refusing_events = bool(command.get("on", True))
            elif name == "drop":
                self.sessions.clear()
            elif name == "misbehave":
                mode = command.get("mode")
                if mode not in (None, "silent", "slow", "bad-tag"):
                    raise ValueError(f"unknown misbehaviour {mode!r}; known: silent, slow, bad-tag, null")
                MISBEHAVIOUR.mode = mode
                MISBEHAVIOUR.seconds = float(command.get("seconds", 3))
            elif name == "garbage":
                self.garbage = bool(command.get("on", True))
            elif name == "add-pairing":
                # Another controller pairs (an iPhone's Home, a second Home Assistant).
                controller = str(command["controller"])
                self.state.pairings[controller] = {"public_key": bytes.fromhex(command.get("public_key", "11" * 32)),
                                                   "admin": bool(command.get("admin"))}
                self.state.save()
                emit("paired", controller=controller, admin=bool(command.get("admin")))
            elif name == "break":
                if command.get("step") not in BREAKABLE_STEPS:
                    raise ValueError(f"unknown step {command.get('step')!r}; known: {', '.join(BREAKABLE_STEPS)}")
                self.broken_steps.add(command["step"])
            elif name == "garbage-datagrams":
                self.send_garbage(int(command.get("count", 1)))
            elif name == "event-type":
                kind = command.get("type")
                if kind not in ("con", "non"):
                    raise ValueError(f"unknown event type {kind!r}; known: con, non")
                self.event_type = Reliable if kind == "con" else Unreliable
            else:
                raise ValueError(f"unknown command {name!r}")
            emit("done", command=name)
        except Exception as error:  # noqa: BLE001  (a bad control line is reported, not fatal)
            emit("error", line=line, message=str(error))

    def send_garbage(self, count):
        interface = self.udp_interface()
        for session in self.sessions.values():
            for _ in range(count):
                interface.transport.sendto(secrets.token_bytes(random.randint(1, 64)), session.remote)

    def udp_interface(self):
        for request_interface in self.context.request_interfaces:
            message_manager = getattr(request_interface, "token_interface", None)
            interface = getattr(message_manager, "message_interface", None)
            if isinstance(interface, udp6.MessageInterfaceUDP6):
                return interface
        raise RuntimeError("aiocoap has no UDP interface")

    # mDNS ---------------------------------------------------------------------------------------

    def txt(self):
        return {"c#": "1", "ff": "0", "id": self.state.device_id, "md": self.arguments.name, "pv": "1.2", "s#": "1",
                "sf": "0" if self.state.paired else "1", "ci": str(self.arguments.category)}

    def service_info(self):
        from zeroconf import ServiceInfo
        suffix = self.state.device_id.replace(":", "")[-6:]
        return ServiceInfo("_hap._udp.local.", f"{self.arguments.name} {suffix}._hap._udp.local.",
                           addresses=[socket.inet_pton(socket.AF_INET6, self.arguments.host)], port=self.port,
                           properties=self.txt(), server=f"coap-peer-{suffix}.local.")

    async def start_mdns(self):
        from zeroconf import IPVersion
        from zeroconf.asyncio import AsyncZeroconf
        self.zeroconf = AsyncZeroconf(ip_version=IPVersion.All)
        await self.zeroconf.async_register_service(self.service_info())

    def announce(self):
        if self.zeroconf is not None:
            asyncio.ensure_future(self.zeroconf.async_update_service(self.service_info()))


class PlainResource(resource.Resource):
    """/0, /1 or /2: TLV8 (or empty) bodies in the clear."""

    def __init__(self, peer, handler):
        super().__init__()
        self.peer = peer
        self.handler = handler

    async def render_post(self, request):
        await slow_down()
        try:
            answer = self.handler(key_of(request.remote), bytes(request.payload))
        except ValueError as error:
            logger.warning("bad request on %s: %s", request.opt.uri_path, error)
            return Message(code=Code.BAD_REQUEST)
        if isinstance(answer, tuple):  # pair-verify's M4: the session starts
            answer, (shared, name, admin) = answer
            key = key_of(request.remote)
            self.peer.sessions[key] = Session(shared, name, admin, key)
            emit("verified", controller=name, port=key[1])
        return Message(code=Code.CHANGED, payload=answer)


class SecureResource(resource.Resource):
    """`/`: sealed PDUs of a verified session."""

    def __init__(self, peer):
        super().__init__()
        self.peer = peer

    async def render_post(self, request):
        await slow_down()
        key = key_of(request.remote)
        session = self.peer.sessions.get(key)
        if session is None:
            return Message(code=Code.NOT_FOUND)
        try:
            plain = session.open(bytes(request.payload))
        except InvalidTag:
            logger.warning("a request from %s did not open: its session is forgotten", key)
            del self.peer.sessions[key]
            return Message(code=Code.NOT_FOUND)
        if plain[:2] == b"\x00\x03" and self.peer.broken("values"):
            return Message(code=Code.INTERNAL_SERVER_ERROR)  # a device that fails a read once
        answer, after = self.peer.answer_pdus(session, plain)
        response = Message(code=Code.CHANGED, payload=spoil(session.seal(answer)))
        for action in after:
            asyncio.get_running_loop().call_soon(action)
        return response


async def slow_down():
    if MISBEHAVIOUR.mode == "slow":
        await asyncio.sleep(MISBEHAVIOUR.seconds)


# --- Running ----------------------------------------------------------------------------------


async def run(arguments, accessory, state):
    peer = Peer(arguments, accessory, state)
    site = resource.Site()
    site.add_resource(["0"], PlainResource(peer, lambda remote, body: (emit("identify"), b"")[1]))
    site.add_resource(["1"], PlainResource(peer, peer.pair_setup))
    site.add_resource(["2"], PlainResource(peer, peer.pair_verify))
    site.add_resource([], SecureResource(peer))
    peer.context = await Context.create_server_context(site, bind=(arguments.host, arguments.port), transports=["udp6"])
    peer.port = peer.udp_interface()._local_port()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, peer.stopping.set)
    loop.add_reader(sys.stdin.fileno(), read_control, peer)
    if arguments.mdns:
        await peer.start_mdns()
    emit("ready", host=arguments.host, port=peer.port, pincode=arguments.pincode, id=state.device_id, accessories=1)
    parent = os.getppid()
    while not peer.stopping.is_set():
        try:
            await asyncio.wait_for(peer.stopping.wait(), 1.0)
        except asyncio.TimeoutError:
            if os.getppid() != parent:
                logger.warning("parent process %d is gone: stopping", parent)
                break
    loop.remove_reader(sys.stdin.fileno())
    if peer.zeroconf is not None:
        await peer.zeroconf.async_unregister_all_services()
        await peer.zeroconf.async_close()
    await peer.context.shutdown()


def read_control(peer):
    line = sys.stdin.readline()
    if not line:  # the end of the input is not a stop: SIGTERM is (and the parent's going away)
        asyncio.get_running_loop().remove_reader(sys.stdin.fileno())
        return
    if line.strip():
        peer.control(line.strip())


def parse_arguments():
    parser = argparse.ArgumentParser(description="Serves a captured accessory database over HAP over CoAP (::1, no mDNS).")
    parser.add_argument("--port", type=int, required=True, help="UDP port; 0 takes a free one (the ready line says which)")
    parser.add_argument("--host", default="::1", help="IPv6 address to bind; default ::1")
    parser.add_argument("--database", required=True, help="an aiohomekit fixture (JSON array with one accessory)")
    parser.add_argument("--pincode", default="031-45-154")
    parser.add_argument("--mac", help="fixed device id (XX:XX:XX:XX:XX:XX); an existing state file's id wins")
    parser.add_argument("--state", help="identity and pairings (JSON, 0600); default: a temporary file removed at exit")
    parser.add_argument("--mdns", action="store_true",
                        help="advertise _hap._udp by mDNS (python-zeroconf); ONLY inside a network namespace a test made")
    parser.add_argument("--name", default="CoAP Peer", help="the name it announces (md, and the mDNS name)")
    parser.add_argument("--category", type=int, default=5, help="the HAP category it announces (ci); default: 5, lightbulb")
    parser.add_argument("--verbose", action="store_true")
    arguments = parser.parse_args()
    if not re.fullmatch(r"\d{3}-\d{2}-\d{3}", arguments.pincode):
        parser.error("--pincode must look like 031-45-154")
    if arguments.mac and not re.fullmatch(r"([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}", arguments.mac):
        parser.error("--mac must look like AA:BB:CC:DD:EE:FF")
    try:
        socket.inet_pton(socket.AF_INET6, arguments.host)
    except OSError:
        parser.error(f"--host must be an IPv6 address, not {arguments.host!r}")
    return arguments


def main():
    arguments = parse_arguments()
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if arguments.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        accessory = Accessory(Database.load(arguments.database))
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"coap_peer.py: {arguments.database}: {error}")
    temporary_state = None
    state_file = arguments.state
    if state_file is None:
        handle, temporary_state = tempfile.mkstemp(prefix="coap-peer-", suffix=".state")
        os.close(handle)
        os.remove(temporary_state)
        state_file = temporary_state
    try:
        asyncio.run(run(arguments, accessory, State(state_file, arguments.mac.upper() if arguments.mac else None)))
    except OSError as error:  # the port is taken, most likely
        sys.exit(f"coap_peer.py: cannot serve on [{arguments.host}]:{arguments.port}: {error}")
    finally:
        if temporary_state and os.path.exists(temporary_state):
            os.remove(temporary_state)
    emit("stopped")


if __name__ == "__main__":
    main()
