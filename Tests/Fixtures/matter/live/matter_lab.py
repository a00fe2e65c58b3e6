#!/usr/bin/env python3
"""HomeGate live Matter lab.

python-matter-server (real CHIP SDK controller) + CircuitMatter lights (pure-Python Matter
devices), each side in its own network + mount namespace made for this run, joined by a veth
pair with ULA IPv6 addresses. mDNS (avahi + private system D-Bus) only runs inside the device
namespace. The server's WebSocket API is exposed in the ROOT namespace on 127.0.0.1:<free port>
by a small TCP forwarder in this process.

Run as root with the .venv-matter python:

  matter_lab.py up --workdir DIR [--devices onoff,dimmable,ct,color] [--capture]
  matter_lab.py check [--workdir DIR] [--kind onoff]

See README.md next to this file for the stdin line protocol and the JSON it prints.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAA_PEM = HERE / "Chip-Test-PAA-NoVID-Cert.pem"
PATCHES = sorted(HERE.glob("circuitmatter-0.4.1-*.patch"))
KINDS = {
    "onoff": "OnOffLight",
    "dimmable": "DimmableLight",
    "ct": "ColorTemperatureLight",
    "color": "ExtendedColorLight",
}
DEVICE_BASE_PORT = 5541
SERVER_PORT = 5580


def log(*a):
    print("[matter_lab]", *a, file=sys.stderr, flush=True)


class LabError(Exception):
    pass


# --------------------------------------------------------------------------------------------
# Device process (runs inside the device namespace, started by the device host)
# --------------------------------------------------------------------------------------------


class PortMappingAvahi:
    """mDNS publisher for CircuitMatter using avahi-publish-service (like circuitmatter's own
    Avahi class) but (1) rewriting CircuitMatter's fixed UDP port 5541 to this device's port so
    several devices can share one namespace and (2) making sure the publishers die with us."""

    def __init__(self, real_port):
        self.real_port = real_port
        self.procs = {}

    def advertise_service(
        self, service_type, protocol, port, txt_records={}, subtypes=[], instance_name=""
    ):
        if port == 5541:
            port = self.real_port
        key = service_type + instance_name
        old = self.procs.pop(key, None)
        if old:
            old.terminate()
        cmd = [
            "avahi-publish-service",
            *[f"--subtype={s}" for s in subtypes],
            instance_name,
            f"{service_type}.{protocol}",
            str(port),
            *[f"{k}={v}" for k, v in txt_records.items()],
        ]
        print("mdns publish:", " ".join(cmd), flush=True)
        self.procs[key] = subprocess.Popen(cmd, preexec_fn=_pdeathsig)

    def stop(self):
        for p in self.procs.values():
            p.terminate()
        for p in self.procs.values():
            try:
                p.wait(2)
            except subprocess.TimeoutExpired:
                p.kill()
        self.procs = {}


def _pdeathsig():
    import ctypes

    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class _PortSocketPool:
    """socket module stand-in: CircuitMatter binds ("::", 5541); bind the given port instead."""

    def __init__(self, port):
        self._port = port

    def __getattr__(self, name):
        return getattr(socket, name)

    def socket(self, *a, **kw):
        s = socket.socket(*a, **kw)
        port = self._port
        orig_bind = s.bind

        class Wrapped:
            def __getattr__(self, name):
                return getattr(s, name)

            def bind(self, addr):
                return orig_bind((addr[0], port) + tuple(addr[2:]))

        return Wrapped()


def device_main(args):
    import circuitmatter as cm
    from circuitmatter import pase
    from circuitmatter.device_types.lighting import (
        color_temperature,
        dimmable,
        extended_color,
        on_off,
    )

    print("circuitmatter from", cm.__file__, flush=True)

    class _Mixin:
        def on(self):
            print(f"LIGHT {self.name} ON", flush=True)

        def off(self):
            print(f"LIGHT {self.name} OFF", flush=True)

        @property
        def brightness(self):
            return self._level_control.CurrentLevel / self._level_control.max_level

        @brightness.setter
        def brightness(self, value):
            print(f"LIGHT {self.name} brightness {value:.3f}", flush=True)

        @property
        def color_rgb(self):
            return getattr(self, "_rgb", 0)

        @color_rgb.setter
        def color_rgb(self, value):
            self._rgb = value
            print(f"LIGHT {self.name} rgb {value:06x}", flush=True)

    classes = {
        "onoff": type("LabOnOff", (_Mixin, on_off.OnOffLight), {}),
        "dimmable": type("LabDimmable", (_Mixin, dimmable.DimmableLight), {}),
        "ct": type("LabCT", (_Mixin, color_temperature.ColorTemperatureLight), {}),
        "color": type("LabColor", (_Mixin, extended_color.ExtendedColorLight), {}),
    }
    mdns = PortMappingAvahi(args.port)
    matter = cm.CircuitMatter(
        socketpool=_PortSocketPool(args.port),
        mdns_server=mdns,
        state_filename=args.state,
        product_name=f"HomeGate lab {args.kind}",
    )
    light = classes[args.kind](args.name)
    # SimpleDevice lists DEVICE_TYPE_ID of every class in the MRO (our subclass would add a
    # duplicate, and CircuitMatter lists e.g. On/Off Light on a Dimmable Light too); keep only
    # the most specific device type, as real lights do.
    light.descriptor.DeviceTypeList = light.descriptor.DeviceTypeList[:1]
    # CircuitMatter 0.4.1 declares but does not wire these mandatory commands (it answers
    # UNSUPPORTED_COMMAND); the lab's lights implement them so a gateway can use them.
    light._on_off.toggle = lambda session: (
        light._off(session) if light._on_off.OnOff else light._on(session)
    )
    if hasattr(light, "_level_control"):

        def _move_to_level(session, value):
            light.brightness = value.Level / light._level_control.max_level
            light._level_control.CurrentLevel = value.Level

        light._level_control.move_to_level = _move_to_level
    matter.add_device(light)
    nv = matter.nonvolatile
    qr = "MT:" + pase.compute_qr_code(
        matter.vendor_id, matter.product_id, nv["discriminator"], nv["passcode"]
    )
    print(
        "LABREADY "
        + json.dumps(
            {
                "qr": qr,
                "manual": nv["manual_code"],
                "port": args.port,
                "commissioned": matter.root_node.fabric_count > 0,
            }
        ),
        flush=True,
    )

    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))

    def reply(obj):
        print("LABREPLY " + json.dumps(obj), flush=True)

    def control(line):
        parts = line.split()
        if not parts:
            return
        cmd = parts[0]
        oo = light._on_off
        if cmd == "toggle":
            oo.OnOff = not oo.OnOff
        elif cmd == "on":
            oo.OnOff = True
        elif cmd == "off":
            oo.OnOff = False
        elif cmd == "level" and hasattr(light, "_level_control"):
            light._level_control.CurrentLevel = int(parts[1])
        elif cmd == "state":
            pass
        else:
            reply({"ok": False, "error": f"unknown device command {line!r}"})
            return
        st = {"ok": True, "on": bool(oo.OnOff), "fabrics": matter.root_node.fabric_count}
        if hasattr(light, "_level_control"):
            st["level"] = light._level_control.CurrentLevel
        reply(st)

    stdin_buf = b""
    stdin_open = True
    try:
        while not stop:
            rl = [matter.socket] + ([sys.stdin.fileno()] if stdin_open else [])
            try:
                r, _, _ = select.select(rl, [], [], 0.02)
            except InterruptedError:
                continue
            if sys.stdin.fileno() in r:
                chunk = os.read(sys.stdin.fileno(), 4096)
                if not chunk:
                    stdin_open = False
                stdin_buf += chunk
                while b"\n" in stdin_buf:
                    line, stdin_buf = stdin_buf.split(b"\n", 1)
                    control(line.decode().strip())
            matter.process_packets()
    finally:
        mdns.stop()
        print("device stopped", flush=True)


# --------------------------------------------------------------------------------------------
# Device host (runs in the device netns, in a private mount namespace: tmpfs on /run)
# --------------------------------------------------------------------------------------------


def devhost_main(args):
    work = Path(args.workdir)
    spec = json.loads(args.spec)
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=755", "lab-run", "/run"], check=True)
    os.makedirs("/run/dbus", exist_ok=True)
    os.makedirs("/run/avahi-daemon", exist_ok=True)
    logs = work / "logs"
    dbus = subprocess.Popen(
        ["dbus-daemon", "--system", "--nofork", "--nopidfile"],
        stdout=open(logs / "dbus.log", "w"),
        stderr=subprocess.STDOUT,
        preexec_fn=_pdeathsig,
    )
    for _ in range(100):
        if os.path.exists("/run/dbus/system_bus_socket"):
            break
        time.sleep(0.05)
    else:
        raise LabError("dbus-daemon did not create /run/dbus/system_bus_socket")
    conf = work / "avahi-daemon.conf"
    conf.write_text(
        "[server]\n"
        f"host-name={spec['hostname']}\n"
        "domain-name=local\n"
        "use-ipv4=no\nuse-ipv6=yes\n"
        f"allow-interfaces={spec['iface']}\n"
        "enable-dbus=yes\n"
        "ratelimit-interval-usec=0\nratelimit-burst=0\n"
        "[wide-area]\nenable-wide-area=no\n"
        "[publish]\npublish-hinfo=no\npublish-workstation=no\npublish-aaaa-on-ipv4=no\n"
        "[reflector]\nenable-reflector=no\n"
    )
    avahi = subprocess.Popen(
        ["avahi-daemon", "--no-chroot", "--no-drop-root", "--no-rlimits", "-f", str(conf)],
        stdout=open(logs / "avahi.log", "w"),
        stderr=subprocess.STDOUT,
        preexec_fn=_pdeathsig,
    )
    for _ in range(100):
        r = subprocess.run(["avahi-browse", "-at", "-p"], capture_output=True)
        if r.returncode == 0:
            break
        time.sleep(0.1)
    else:
        raise LabError("avahi-daemon did not come up (see logs/avahi.log)")

    env = dict(os.environ)
    if spec.get("pythonpath"):
        env["PYTHONPATH"] = spec["pythonpath"]
    env["PYTHONUNBUFFERED"] = "1"
    devices = {}

    def start(name):
        d = spec["devices"][name]
        ddir = work / "devices" / name
        ddir.mkdir(parents=True, exist_ok=True)
        logf = open(logs / f"device-{name}.log", "a")
        p = subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "_device",
                "--name",
                name,
                "--kind",
                d["kind"],
                "--port",
                str(d["port"]),
                "--state",
                str(ddir / "state.json"),
            ],
            cwd=ddir,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=_pdeathsig,
            text=True,
            bufsize=1,
        )
        q = []
        cond = threading.Condition()
        ready = {}

        def pump():
            for line in p.stdout:
                logf.write(f"{time.time():.3f} {line}")
                logf.flush()
                if line.startswith("LABREADY "):
                    with cond:
                        ready.update(json.loads(line[9:]))
                        cond.notify_all()
                elif line.startswith("LABREPLY "):
                    with cond:
                        q.append(json.loads(line[9:]))
                        cond.notify_all()
            with cond:
                ready.setdefault("dead", True)
                cond.notify_all()

        threading.Thread(target=pump, daemon=True).start()
        with cond:
            cond.wait_for(lambda: ready, timeout=30)
        if not ready or ready.get("dead"):
            raise LabError(f"device {name} did not start, see logs/device-{name}.log")
        devices[name] = {"proc": p, "q": q, "cond": cond, "ready": ready}
        return ready

    def stop(name, sig=signal.SIGTERM):
        dev = devices.pop(name, None)
        if not dev:
            return False
        p = dev["proc"]
        p.send_signal(sig)
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        return True

    def out(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    info = {}
    for name in spec["devices"]:
        info[name] = start(name)
    out({"ready": True, "devices": info})

    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        cmd, name = parts[0], (parts[1] if len(parts) > 1 else "")
        try:
            if name not in spec["devices"]:
                out({"ok": False, "error": f"unknown device {name!r}"})
            elif cmd == "start":
                if name in devices:
                    out({"ok": False, "error": f"{name} is running"})
                else:
                    r = start(name)
                    out({"ok": True, "started": name, **r})
            elif cmd == "reset":
                stop(name)
                state = work / "devices" / name / "state.json"
                if state.exists():
                    state.unlink()
                r = start(name)
                out({"ok": True, "reset": name, **r})
            elif cmd in ("stop", "kill"):
                ok = stop(name, signal.SIGTERM if cmd == "stop" else signal.SIGKILL)
                out({"ok": ok, "stopped": name} if ok else {"ok": False, "error": "not running"})
            else:
                dev = devices.get(name)
                if not dev:
                    out({"ok": False, "error": f"{name} is not running"})
                    continue
                with dev["cond"]:
                    n = len(dev["q"])
                    dev["proc"].stdin.write(" ".join([cmd] + parts[2:]) + "\n")
                    dev["proc"].stdin.flush()
                    dev["cond"].wait_for(lambda: len(dev["q"]) > n, timeout=5)
                    if len(dev["q"]) > n:
                        out(dev["q"][n])
                    else:
                        out({"ok": False, "error": "device did not answer"})
        except Exception as e:  # noqa: BLE001
            out({"ok": False, "error": str(e)})
    for name in list(devices):
        stop(name)
    avahi.terminate()
    dbus.terminate()
    for p in (avahi, dbus):
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()


# --------------------------------------------------------------------------------------------
# The lab (root namespace)
# --------------------------------------------------------------------------------------------


def run(cmd, check=True, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        raise LabError(f"{' '.join(cmd)} failed: {r.stderr.strip() or r.stdout.strip()}")
    return r


def preflight():
    problems = []
    if os.geteuid() != 0:
        problems.append("must run as root (network namespaces, mounts)")
    for tool, pkg in [
        ("ip", "iproute2"),
        ("unshare", "util-linux"),
        ("mount", "mount"),
        ("dbus-daemon", "dbus"),
        ("avahi-daemon", "avahi-daemon"),
        ("avahi-publish-service", "avahi-utils"),
        ("avahi-browse", "avahi-utils"),
        ("patch", "patch"),
        ("ping", "iputils-ping"),  # matter-server's ping_node shells out to ping
    ]:
        if not shutil.which(tool):
            problems.append(f"missing {tool}: apt-get install -y {pkg}")
    for mod, hint in [
        ("circuitmatter", 'pip install circuitmatter==0.4.1'),
        ("matter_server", 'pip install "python-matter-server[server]==8.1.2"'),
        ("aiohttp", 'pip install "python-matter-server[server]==8.1.2"'),
    ]:
        r = subprocess.run([sys.executable, "-c", f"import {mod}"], capture_output=True)
        if r.returncode != 0:
            problems.append(
                f"python module {mod} not importable by {sys.executable}: run matter_lab.py with "
                f"the venv python (e.g. /work/main/.venv-matter/bin/python) or {hint}"
            )
    if not problems:
        r = subprocess.run(
            [sys.executable, "-c",
             "import importlib.util,pathlib;"
             "print(pathlib.Path(importlib.util.find_spec('chip').origin).parent)"],
            capture_output=True, text=True)
        so = Path(r.stdout.strip()) / "_ChipDeviceCtrl.so"
        if so.exists() and shutil.which("ldd"):
            missing = [l.split()[0] for l in run(["ldd", str(so)], check=False).stdout.splitlines()
                       if "not found" in l]
            hints = {"libnl-3.so.200": "libnl-3-200", "libnl-route-3.so.200": "libnl-route-3-200"}
            for lib in missing:
                problems.append(f"CHIP SDK needs {lib}: apt-get install -y "
                                f"{hints.get(lib, '<package providing ' + lib + '>')}")
    if not hasattr(os, "setns"):
        problems.append("needs Python >= 3.12 (os.setns); use the .venv-matter python")
    if not PAA_PEM.exists():
        problems.append(f"missing {PAA_PEM}")
    if problems:
        raise LabError("preflight failed:\n  " + "\n  ".join(problems))


def prepare_circuitmatter_overlay(work: Path) -> str:
    """Copy circuitmatter into WORK/pylib and apply our patches there (never touch the venv)."""
    import importlib.util

    spec = importlib.util.find_spec("circuitmatter")
    src = Path(spec.origin).parent
    dst_root = work / "pylib"
    dst = dst_root / "circuitmatter"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    for p in PATCHES:
        r = subprocess.run(
            ["patch", "-p1", "--forward", "--batch", "-d", str(dst_root), "-i", str(p)],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise LabError(f"patch {p.name} failed: {r.stdout}{r.stderr}")
        log(f"applied {p.name}")
    return str(dst_root)


class Lab:
    def __init__(self, work: Path, kinds: list[str], capture=False, patch=True, sdk_log="error",
                 sub_max_interval=None, unavailable_after=None):
        self.work = work
        self.sub_max_interval = sub_max_interval
        self.unavailable_after = unavailable_after
        self.kinds = kinds
        self.capture = capture
        self.patch = patch
        self.sdk_log = sdk_log
        self.id = secrets.token_hex(3)
        self.ns_s = f"mlab-{self.id}-s"
        self.ns_d = f"mlab-{self.id}-d"
        self.if_s = f"mls{self.id}"
        self.if_d = f"mld{self.id}"
        pfx = secrets.token_hex(5)
        self.prefix = f"fd{pfx[0:2]}:{pfx[2:6]}:{pfx[6:10]}:1"
        self.addr_s = f"{self.prefix}::1"
        self.addr_d = f"{self.prefix}::2"
        self.procs = []
        self.devhost = None
        self.server = None
        self.ws_port = None
        self.proxy = None
        self.devices = {}
        self._ns_exec = None
        self._lock = asyncio.Lock()

    # ---- network -------------------------------------------------------------------------
    def make_network(self):
        run(["ip", "netns", "add", self.ns_s])
        run(["ip", "netns", "add", self.ns_d])
        for ns in (self.ns_s, self.ns_d):
            for k in ("all", "default"):
                run(["ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv6.conf.{k}.accept_dad=0"])
            run(["ip", "-n", ns, "link", "set", "lo", "up"])
        run(
            ["ip", "link", "add", self.if_s, "netns", self.ns_s, "type", "veth", "peer", "name",
             self.if_d, "netns", self.ns_d]
        )
        run(["ip", "-n", self.ns_s, "addr", "add", f"{self.addr_s}/64", "dev", self.if_s, "nodad"])
        run(["ip", "-n", self.ns_d, "addr", "add", f"{self.addr_d}/64", "dev", self.if_d, "nodad"])
        run(["ip", "-n", self.ns_s, "link", "set", self.if_s, "up"])
        run(["ip", "-n", self.ns_d, "link", "set", self.if_d, "up"])
        # multicast route for mDNS (ff02::fb is link-local; default routes are not needed)
        for _ in range(50):
            r = run(["ip", "-n", self.ns_s, "-6", "addr", "show", "dev", self.if_s], check=False)
            if "fe80::" in r.stdout and "tentative" not in r.stdout:
                break
            time.sleep(0.1)

    def teardown_network(self):
        for ns in (self.ns_s, self.ns_d):
            r = run(["ip", "netns", "pids", ns], check=False)
            for pid in r.stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            run(["ip", "netns", "del", ns], check=False)

    # ---- processes -----------------------------------------------------------------------
    async def start(self):
        w = self.work
        w.mkdir(parents=True, exist_ok=True)
        (w / "logs").mkdir(exist_ok=True)
        pythonpath = prepare_circuitmatter_overlay(w) if self.patch else ""
        self.make_network()
        if self.capture:
            if not shutil.which("tshark"):
                raise LabError("--capture needs tshark: apt-get install -y tshark")
            p = subprocess.Popen(
                ["ip", "netns", "exec", self.ns_s, "tshark", "-q", "-i", self.if_s, "-w",
                 str(w / "capture.pcapng")],
                stdout=open(w / "logs" / "tshark.log", "w"),
                stderr=subprocess.STDOUT,
            )
            self.procs.append(p)
            await asyncio.sleep(1.0)
        spec = {
            "hostname": f"mlab-{self.id}",
            "iface": self.if_d,
            "pythonpath": pythonpath,
            "devices": {},
        }
        seen = {}
        for i, kind in enumerate(self.kinds):
            seen[kind] = seen.get(kind, 0) + 1
            name = f"{kind}{seen[kind]}" if self.kinds.count(kind) > 1 else kind
            spec["devices"][name] = {"kind": kind, "port": DEVICE_BASE_PORT + i}
        self.spec = spec
        self.devhost = await asyncio.create_subprocess_exec(
            "ip", "netns", "exec", self.ns_d, "unshare", "--mount", "--propagation", "private",
            sys.executable, str(Path(__file__).resolve()), "_devhost", "--workdir", str(w),
            "--spec", json.dumps(spec),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=open(w / "logs" / "devhost.log", "w"),
            preexec_fn=_pdeathsig,
        )
        line = await asyncio.wait_for(self.devhost.stdout.readline(), 60)
        if not line:
            raise LabError(f"device host died, see {w}/logs/devhost.log")
        info = json.loads(line)
        for name, d in info["devices"].items():
            self.devices[name] = {
                "name": name,
                "kind": spec["devices"][name]["kind"],
                "qr": d["qr"],
                "manual": d["manual"],
                "port": d["port"],
                "address": self.addr_d,
                "control": f"stdin: toggle|on|off|level N|state|stop|kill|start {name}",
            }

        # server: its own mount ns with WORK/server/data on /data and WORK/server/tmp on /tmp
        sd = w / "server"
        (sd / "data" / "paa").mkdir(parents=True, exist_ok=True)
        (sd / "tmp").mkdir(parents=True, exist_ok=True)
        pem = PAA_PEM.read_bytes()
        (sd / "data" / "paa" / "Chip-Test-PAA-NoVID-Cert.pem").write_bytes(pem)
        import base64

        der = base64.b64decode(b"".join(l for l in pem.splitlines() if not l.startswith(b"-----")))
        (sd / "data" / "paa" / "Chip-Test-PAA-NoVID-Cert.der").write_bytes(der)
        (sd / "data" / "paa" / ".version").write_text("1")
        os.makedirs("/data", exist_ok=True)  # mount point only; stays empty on the host
        server_args = [
            "--storage-path", "/data/storage", "--paa-root-cert-dir", "/data/paa",
            "--port", str(SERVER_PORT), "--listen-address", "127.0.0.1", "--listen-address", "::1",
            "--log-level", os.environ.get("MATTER_LAB_LOG", "info"), "--log-level-sdk", self.sdk_log,
        ]
        # Optional tuning of python-matter-server module constants (stock values: subscription
        # max-interval ceiling 60 s, node marked unavailable after 2 failed resubscriptions).
        tune = []
        if self.sub_max_interval is not None:
            tune.append(
                f"dc.NODE_SUBSCRIPTION_CEILING_WIFI = dc.NODE_SUBSCRIPTION_CEILING_THREAD = "
                f"{int(self.sub_max_interval)}"
            )
        if self.unavailable_after is not None:
            tune.append(f"dc.NODE_RESUBSCRIBE_ATTEMPTS_UNAVAILABLE = {int(self.unavailable_after)}")
        boot = (
            "import sys, runpy; import matter_server.server.device_controller as dc; "
            + "".join(t + "; " for t in tune)
            + f"sys.argv = ['matter-server'] + {server_args!r}; "
            "runpy.run_module('matter_server.server', run_name='__main__', alter_sys=True)"
        )
        script = (
            f"mount --make-rprivate / && mount --bind {sd / 'data'} /data && "
            f"mount --bind {sd / 'tmp'} /tmp && exec {sys.executable} -c {shlex.quote(boot)}"
        )
        self.server = await asyncio.create_subprocess_exec(
            "ip", "netns", "exec", self.ns_s, "unshare", "--mount", "--propagation", "private",
            "sh", "-c", script,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=open(w / "logs" / "server.log", "w"),
            stderr=subprocess.STDOUT,
            preexec_fn=_pdeathsig,
        )
        await self.start_proxy()
        # wait for the websocket to answer
        import aiohttp

        deadline = time.monotonic() + 60
        while True:
            if self.server.returncode is not None:
                raise LabError(f"matter-server exited, see {w}/logs/server.log")
            try:
                async with aiohttp.ClientSession() as s:
                    async with s.ws_connect(self.ws_url, timeout=2) as ws:
                        msg = await ws.receive_json(timeout=5)
                        if "fabric_id" in msg:
                            break
            except Exception:  # noqa: BLE001
                pass
            if time.monotonic() > deadline:
                raise LabError(f"matter-server WebSocket did not come up, see {w}/logs/server.log")
            await asyncio.sleep(0.3)

    @property
    def ws_url(self):
        return f"ws://127.0.0.1:{self.ws_port}/ws"

    async def start_proxy(self):
        fd = os.open(f"/run/netns/{self.ns_s}", os.O_RDONLY)

        def init():
            os.setns(fd, os.CLONE_NEWNET)  # this worker thread lives in the server netns

        self._ns_exec = ThreadPoolExecutor(max_workers=1, initializer=init)
        loop = asyncio.get_running_loop()

        async def handle(reader, writer):
            try:
                sock = await loop.run_in_executor(
                    self._ns_exec, socket.socket, socket.AF_INET, socket.SOCK_STREAM
                )
                sock.setblocking(False)
                await loop.sock_connect(sock, ("127.0.0.1", SERVER_PORT))
                r2, w2 = await asyncio.open_connection(sock=sock)
            except OSError:
                writer.close()
                return

            async def pipe(r, w):
                try:
                    while data := await r.read(65536):
                        w.write(data)
                        await w.drain()
                except (ConnectionError, asyncio.CancelledError):
                    pass
                finally:
                    try:
                        w.close()
                    except Exception:  # noqa: BLE001
                        pass

            await asyncio.gather(pipe(reader, w2), pipe(r2, writer))

        self.proxy = await asyncio.start_server(handle, "127.0.0.1", 0)
        self.ws_port = self.proxy.sockets[0].getsockname()[1]

    async def device_cmd(self, line: str) -> dict:
        async with self._lock:
            self.devhost.stdin.write((line.strip() + "\n").encode())
            await self.devhost.stdin.drain()
            out = await asyncio.wait_for(self.devhost.stdout.readline(), 30)
            if not out:
                return {"ok": False, "error": "device host died"}
            return json.loads(out)

    def ready_line(self):
        return {
            "ws": self.ws_url,
            "run_id": self.id,
            "namespaces": {"server": self.ns_s, "devices": self.ns_d},
            "server_address": self.addr_s,
            "workdir": str(self.work),
            "devices": list(self.devices.values()),
        }

    async def stop(self):
        if self.proxy:
            self.proxy.close()
        if self.server and self.server.returncode is None:
            self.server.terminate()
            try:
                await asyncio.wait_for(self.server.wait(), 10)
            except asyncio.TimeoutError:
                self.server.kill()
        if self.devhost and self.devhost.returncode is None:
            try:
                self.devhost.stdin.close()
                await asyncio.wait_for(self.devhost.wait(), 10)
            except (asyncio.TimeoutError, BrokenPipeError, ConnectionError):
                self.devhost.kill()
        for p in self.procs:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
        self.teardown_network()
        if self._ns_exec:
            self._ns_exec.shutdown(wait=False)


async def up_main(args):
    kinds = [k.strip() for k in args.devices.split(",") if k.strip()]
    for k in kinds:
        if k not in KINDS:
            raise LabError(f"unknown device kind {k!r}; choose from {', '.join(KINDS)}")
    preflight()
    lab = Lab(Path(args.workdir).resolve(), kinds, capture=args.capture, patch=not args.no_patch,
              sdk_log=args.sdk_log,
              sub_max_interval=args.sub_max_interval, unavailable_after=args.unavailable_after)
    loop = asyncio.get_running_loop()
    stop_ev = asyncio.Event()
    for s in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(s, stop_ev.set)
    rc = 0
    try:
        await lab.start()
        print(json.dumps(lab.ready_line()), flush=True)
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while not stop_ev.is_set():
            t_line = asyncio.ensure_future(reader.readline())
            t_stop = asyncio.ensure_future(stop_ev.wait())
            done, _ = await asyncio.wait({t_line, t_stop}, return_when=asyncio.FIRST_COMPLETED)
            if t_stop in done:
                t_line.cancel()
                break
            t_stop.cancel()
            line = t_line.result()
            if not line:
                break  # stdin EOF
            text = line.decode().strip()
            if not text:
                continue
            if text in ("quit", "exit"):
                print(json.dumps({"ok": True, "bye": True}), flush=True)
                break
            if text == "info":
                print(json.dumps({"ok": True, **lab.ready_line()}), flush=True)
                continue
            print(json.dumps(await lab.device_cmd(text)), flush=True)
    except LabError as e:
        log("ERROR:", e)
        rc = 1
    finally:
        await lab.stop()
    return rc


# --------------------------------------------------------------------------------------------
# check: end-to-end self test through the WebSocket API
# --------------------------------------------------------------------------------------------


class WS:
    def __init__(self, ws, record=None):
        self.ws = ws
        self.n = 0
        self.events = asyncio.Queue()
        self.pending = {}
        self.record = record
        self.task = asyncio.ensure_future(self._reader())

    async def _reader(self):
        async for msg in self.ws:
            data = json.loads(msg.data)
            if self.record is not None:
                self.record.append((time.monotonic(), data))
            if "message_id" in data and data["message_id"] in self.pending:
                self.pending.pop(data["message_id"]).set_result(data)
            elif "event" in data:
                await self.events.put((time.monotonic(), data))

    async def call(self, command, timeout=120, **args):
        self.n += 1
        mid = f"m{self.n}"
        fut = asyncio.get_running_loop().create_future()
        self.pending[mid] = fut
        await self.ws.send_json({"message_id": mid, "command": command, "args": args})
        res = await asyncio.wait_for(fut, timeout)
        if "error_code" in res:
            raise LabError(f"{command} failed: {res}")
        return res["result"]

    async def wait_event(self, pred, timeout):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LabError("timed out waiting for event")
            t, ev = await asyncio.wait_for(self.events.get(), left)
            if pred(ev):
                return t, ev


def _attr(node, path):
    return node["attributes"].get(path)


async def check_main(args):
    import tempfile

    preflight()
    import aiohttp
    work = Path(args.workdir or tempfile.mkdtemp(prefix="matter-lab-check-")).resolve()
    lab = Lab(work, [args.kind], capture=args.capture, patch=not args.no_patch,
              sdk_log=args.sdk_log,
              sub_max_interval=args.sub_max_interval, unavailable_after=args.unavailable_after)
    timings = {}
    record = [] if args.record else None
    rc = 0
    me = asyncio.current_task()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, me.cancel)
    try:
        t0 = time.monotonic()
        await lab.start()
        timings["lab_up_s"] = round(time.monotonic() - t0, 2)
        dev = next(iter(lab.devices.values()))
        log("lab up:", json.dumps(lab.ready_line()))
        async with aiohttp.ClientSession() as s:
            async with s.ws_connect(lab.ws_url, max_msg_size=0) as raw:
                info = await raw.receive_json()
                if record is not None:
                    record.append((time.monotonic(), info))
                ws = WS(raw, record)
                await ws.call("start_listening")
                t = time.monotonic()
                node = await ws.call("commission_with_code", code=dev["qr"], network_only=True,
                                     timeout=300)
                timings["commission_and_interview_s"] = round(time.monotonic() - t, 2)
                node_id = node["node_id"]
                onoff_path = "1/6/0"
                if _attr(node, onoff_path) is None:
                    raise LabError(f"node has no OnOff attribute 1/6/0: {sorted(node['attributes'])[:40]}")
                log(f"node {node_id} interviewed, {len(node['attributes'])} attributes")
                nodes = await ws.call("get_nodes")
                if not any(n["node_id"] == node_id for n in nodes):
                    raise LabError("get_nodes does not list the node")
                await ws.call("get_node", node_id=node_id)
                t = time.monotonic()
                await ws.call("read_attribute", node_id=node_id, attribute_path=onoff_path)
                timings["read_attribute_s"] = round(time.monotonic() - t, 3)
                await ws.call("ping_node", node_id=node_id)
                try:  # error shape sample
                    await ws.call("device_command", node_id=node_id + 999, endpoint_id=1,
                                  cluster_id=6, command_name="On", payload={})
                except LabError:
                    pass

                for want in (True, False):
                    cmd = "On" if want else "Off"
                    t = time.monotonic()
                    await ws.call("device_command", node_id=node_id, endpoint_id=1, cluster_id=6,
                                  command_name=cmd, payload={})
                    timings[f"command_{cmd}_s"] = round(time.monotonic() - t, 3)
                    st = await lab.device_cmd(f"state {dev['name']}")
                    if st.get("on") is not want:
                        raise LabError(f"device did not switch {cmd}: {st}")
                    _, ev = await ws.wait_event(
                        lambda e: e["event"] == "attribute_updated"
                        and e["data"][0] == node_id and e["data"][1] == onoff_path
                        and e["data"][2] is want, 30)

                t = time.monotonic()
                st = await lab.device_cmd(f"toggle {dev['name']}")
                t2, ev = await ws.wait_event(
                    lambda e: e["event"] == "attribute_updated" and e["data"][1] == onoff_path
                    and e["data"][2] is st["on"], 30)
                timings["device_side_change_to_event_s"] = round(t2 - t, 3)

                t = time.monotonic()
                await lab.device_cmd(f"{args.stop_mode} {dev['name']}")
                t2, ev = await ws.wait_event(
                    lambda e: e["event"] == "node_updated" and e["data"]["node_id"] == node_id
                    and not e["data"]["available"], args.unavail_timeout)
                timings["stop_to_unavailable_s"] = round(t2 - t, 2)

                t = time.monotonic()
                st = await lab.device_cmd(f"start {dev['name']}")
                if not st.get("ok"):
                    raise LabError(f"device did not restart: {st}")
                t2, ev = await ws.wait_event(
                    lambda e: e["event"] == "node_updated" and e["data"]["node_id"] == node_id
                    and e["data"]["available"], 300)
                timings["start_to_available_s"] = round(t2 - t, 2)

                t = time.monotonic()
                await ws.call("device_command", node_id=node_id, endpoint_id=1, cluster_id=6,
                              command_name="Toggle", payload={})
                timings["command_after_restart_s"] = round(time.monotonic() - t, 3)

                t = time.monotonic()
                await ws.call("remove_node", node_id=node_id)
                timings["remove_node_s"] = round(time.monotonic() - t, 2)
                await ws.wait_event(lambda e: e["event"] == "node_removed", 30)
                nodes = await ws.call("get_nodes")
                if any(n["node_id"] == node_id for n in nodes):
                    raise LabError("node still listed after remove_node")
                # the device must have dropped the fabric (RemoveFabric), and after a restart
                # it is commissionable again with the same QR code
                for _ in range(50):
                    st = await lab.device_cmd(f"state {dev['name']}")
                    if st.get("fabrics") == 0:
                        break
                    await asyncio.sleep(0.2)
                else:
                    raise LabError(f"device still has a fabric after remove_node: {st}")
                await lab.device_cmd(f"stop {dev['name']}")
                st = await lab.device_cmd(f"start {dev['name']}")
                if st.get("commissioned") is not False:
                    raise LabError(f"device not back in commissioning mode after remove: {st}")
                t = time.monotonic()
                node2 = await ws.call("commission_with_code", code=dev["qr"], network_only=True,
                                      timeout=300)
                timings["recommission_after_remove_s"] = round(time.monotonic() - t, 2)
                await ws.call("device_command", node_id=node2["node_id"], endpoint_id=1,
                              cluster_id=6, command_name="On", payload={})
        print(json.dumps({"ok": True, "timings": timings, "workdir": str(work)}), flush=True)
    except (LabError, asyncio.TimeoutError, asyncio.CancelledError) as e:
        log("CHECK FAILED:", repr(e), f"(logs in {work}/logs)")
        print(json.dumps({"ok": False, "error": repr(e), "timings": timings,
                          "workdir": str(work)}), flush=True)
        rc = 1
    finally:
        if record is not None:
            with open(args.record, "w") as f:
                for t, m in record:
                    f.write(json.dumps(m) + "\n")
        await lab.stop()
    return rc


def cleanup_main(args):
    """Remove namespaces left by a lab that was SIGKILLed (normal exits clean up themselves)."""
    r = run(["ip", "netns", "list"], check=False)
    names = [l.split()[0] for l in r.stdout.splitlines() if l.startswith("mlab-")]
    if not args.all:
        names = [n for n in names if n.startswith(f"mlab-{args.run_id}-")]
    for ns in names:
        for pid in run(["ip", "netns", "pids", ns], check=False).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        run(["ip", "netns", "del", ns], check=False)
    print(json.dumps({"ok": True, "removed": names}))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start the lab and keep it running")
    up.add_argument("--workdir", required=True)
    up.add_argument("--devices", default="onoff", help="comma list of " + ",".join(KINDS))
    ck = sub.add_parser("check", help="end-to-end self test")
    ck.add_argument("--workdir")
    ck.add_argument("--kind", default="onoff", choices=list(KINDS))
    ck.add_argument("--record", help="write every WebSocket message received to this file")
    ck.add_argument("--stop-mode", default="stop", choices=["stop", "kill"])
    ck.add_argument("--unavail-timeout", type=float, default=300)
    for p in (up, ck):
        p.add_argument("--capture", action="store_true", help="tshark on the server veth")
        p.add_argument("--no-patch", action="store_true", help="use circuitmatter unpatched")
        p.add_argument("--sdk-log", default="error", help="matter-server --log-level-sdk")
        p.add_argument("--sub-max-interval", type=int, default=None,
                       help="patch matter-server's subscription max-interval ceiling (stock 60 s)")
        p.add_argument("--unavailable-after", type=int, default=None,
                       help="patch matter-server's failed-resubscribe count before a node is "
                       "marked unavailable (stock 2)")
    cl = sub.add_parser("cleanup", help="remove namespaces of a SIGKILLed lab")
    g = cl.add_mutually_exclusive_group(required=True)
    g.add_argument("--run-id")
    g.add_argument("--all", action="store_true", help="every mlab-* namespace (kills labs!)")
    dv = sub.add_parser("_device")
    dv.add_argument("--name", required=True)
    dv.add_argument("--kind", required=True)
    dv.add_argument("--port", type=int, required=True)
    dv.add_argument("--state", required=True)
    dh = sub.add_parser("_devhost")
    dh.add_argument("--workdir", required=True)
    dh.add_argument("--spec", required=True)
    args = ap.parse_args()
    try:
        if args.cmd == "_device":
            return device_main(args)
        if args.cmd == "_devhost":
            return devhost_main(args)
        if args.cmd == "up":
            return asyncio.run(up_main(args))
        if args.cmd == "check":
            return asyncio.run(check_main(args))
        if args.cmd == "cleanup":
            return cleanup_main(args)
    except LabError as e:
        log("ERROR:", e)
        return 1


if __name__ == "__main__":
    sys.exit(main() or 0)
