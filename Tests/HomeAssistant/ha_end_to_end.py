#!/usr/bin/env python3
"""HomeGate and a real Home Assistant, end to end, through a real Mosquitto.

Run by scripts/test-home-assistant with the Python of Home Assistant's venv (aiohttp comes with
Home Assistant). It starts, each on a free port in a temporary folder: Mosquitto, the device zoo's
peers (zoo_peer.py, with the HAP venv's Python) for every device homekit_controller has a snapshot
of, the real homegate binary on the demo home with Home Assistant discovery on, and Home Assistant
itself; onboards a user through /api/onboarding/users, takes a token from /auth/token, adds the
MQTT integration through /api/config/config_entries/flow, pairs the zoo's devices over MQTT, and
reads the registries over the websocket API. It checks:

1. every zoo device gets the entities homekit_controller makes for it, per domain
   (Tests/Fixtures/hap/zoo/homekit_controller_entities.tsv, less what is left out on purpose),
   and shows homekit_controller's words (Thread status and capabilities, a TV's input source);
2. the demo's colour lamp takes colour: light.turn_on with hs_color reaches hue and saturation,
   retained, and Home Assistant shows the colour;
3. a renamed accessory shows only its new name, and its entity is never unavailable (nor its state
   unknown) on the way: the state changes Home Assistant fires during the rename are measured;
4. a removed accessory leaves Home Assistant and stays gone after the gateway restarts;
5. Home Assistant's log has no error about HomeGate's discovery configs.

Every step prints what it does; the first failure ends the run with exit status 1.
"""

import argparse
import asyncio
import csv
import json
import os
import re
import signal
import subprocess
import sys
import time

import aiohttp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Support"))
sys.dont_write_bytecode = True  # no __pycache__ left in the tree
from e2e import HAP_FIXTURES, PINCODE, Failure, free_port, log, pair_with_retries, peer_command  # noqa: E402
import e2e  # noqa: E402

ZOO = os.path.join(HAP_FIXTURES, "zoo")
# What the parity test leaves out on purpose (Tests/GatewayTests/HomeAssistantParityTests.swift).
LEFT_OUT = {"Aqara Hub-1563 Volume", "Aqara Hub-1563 Pairing Mode", "Koogeek-SW2-187A91 Power",
            "Airversa AP2 1808 Provision Preferred Thread Credentials", "Nanoleaf Strip 3B32 Provision Preferred Thread Credentials",
            "LG webOS TV AF80", "HAA-C718B3 Setup", "HAA-C718B3 Update"}


class Run(e2e.Run):
    def __init__(self, args):
        super().__init__(args, "homegate-ha-")
        self.http_port = free_port()
        self.homegate = None
        self.token = None

    # Processes

    def start_homegate(self):
        demo = self.demo_config()
        # Not the demo's web page on port 8080: nothing here uses it, and the port may be taken.
        if "\nui:\n  port: 8080\n" not in demo:
            raise Failure("config/demo.yml no longer ends with its ui: section; update start_homegate")
        demo = demo.replace("\nui:\n  port: 8080\n", "\n")
        demo += "\nhome_assistant:\n  enabled: true\n"
        self.homegate = super().start_homegate(demo)

    def start_zoo(self):
        """One zoo peer per fixture of the reference; returns {fixture: device id}."""
        devices = {}
        for fixture in sorted({row["fixture"] for row in self.reference()}):
            port = free_port()
            _, event, _ = self.start_until_ready(f"zoo-{fixture}", f"zoo peer {fixture}",
                                                 peer_command(self.args.zoo_python, "zoo_peer.py", port, "--database", os.path.join(ZOO, f"{fixture}.json")),
                                                 stdin=subprocess.PIPE)
            devices[fixture] = (event["id"], port)
        return devices

    def start_home_assistant(self):
        config = os.path.join(self.folder, "ha")
        os.makedirs(config)
        with open(os.path.join(config, "configuration.yaml"), "w") as file:
            file.write(f"""homeassistant:
  name: HomeGate test
  unit_system: metric
  time_zone: UTC
  latitude: 52.37
  longitude: 4.89
  elevation: 0
http:
  server_host: 127.0.0.1
  server_port: {self.http_port}
api:
auth:
config:
onboarding:
websocket_api:
logger:
  default: warning
""")
        self.start("home-assistant", [self.args.hass, "--config", config])
        self.wait_for(lambda: self.http_ok("/api/onboarding"), "Home Assistant's HTTP server", 300)

    # MQTT, through Debian's mosquitto clients

    def pair(self, port):
        """Pairs a zoo peer (again on HAP-python's setup-code quirk: pair_with_retries)."""
        return pair_with_retries(lambda attempt: self.request("accessory/pair", {"host": "127.0.0.1", "port": port, "code": PINCODE}))

    # Waiting

    def http_ok(self, path):
        import urllib.request
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}{path}", timeout=2) as response:
                return response.status == 200
        except Exception:
            return False

    async def eventually(self, check, what, seconds=60):
        deadline = time.monotonic() + seconds
        last = None
        while time.monotonic() < deadline:
            last = await check()
            if last is True:
                return
            await asyncio.sleep(0.5)
        raise Failure(f"timed out after {seconds} s: {what} (last: {last})")

    # Home Assistant's APIs

    def retained_configs(self):
        """Every retained discovery config of the gateway: {topic: config}."""
        result = subprocess.run(["mosquitto_sub", "-p", str(self.mqtt_port), "-t", "homeassistant/device/+/config", "-v",
                                 "--retained-only", "-W", "2"], capture_output=True, text=True)
        configs = {}
        for line in result.stdout.splitlines():
            topic, _, payload = line.partition(" ")
            if payload:
                configs[topic] = json.loads(payload)
        if not configs:
            raise Failure(f"no retained discovery config ({result.stderr.strip()})")
        return configs

    @staticmethod
    def reference():
        with open(os.path.join(ZOO, "homekit_controller_entities.tsv")) as file:
            return [row for row in csv.DictReader(file, delimiter="\t") if row["original_name"] not in LEFT_OUT]

    async def onboard(self, session):
        base = f"http://127.0.0.1:{self.http_port}"
        client = f"{base}/"
        async with session.post(f"{base}/api/onboarding/users", json={"client_id": client, "name": "Test", "username": "test",
                                                                     "password": "homegate-test-password", "language": "en"}) as response:
            if response.status != 200:
                raise Failure(f"onboarding: {response.status} {await response.text()}")
            code = (await response.json())["auth_code"]
        async with session.post(f"{base}/auth/token", data={"grant_type": "authorization_code", "code": code, "client_id": client}) as response:
            self.token = (await response.json())["access_token"]
        headers = {"Authorization": f"Bearer {self.token}"}
        async with session.post(f"{base}/api/config/config_entries/flow", json={"handler": "mqtt", "show_advanced_options": False},
                                headers=headers) as response:
            flow = await response.json()
        async with session.post(f"{base}/api/config/config_entries/flow/{flow['flow_id']}",
                                json={"broker": "127.0.0.1", "port": self.mqtt_port}, headers=headers) as response:
            result = await response.json()
            if result.get("type") != "create_entry":
                raise Failure(f"adding the MQTT integration: {result}")
        # Commands sent before Home Assistant's MQTT client announces itself (its birth message) are lost.
        traffic = os.path.join(self.folder, "traffic.log")
        self.wait_for(lambda: " homeassistant/status online" in open(traffic).read(), "Home Assistant's birth message", 60)
        log(f"Home Assistant onboarded, MQTT integration added (broker 127.0.0.1:{self.mqtt_port}) and online")

    async def websocket(self, session):
        ws = await session.ws_connect(f"http://127.0.0.1:{self.http_port}/api/websocket")
        await ws.receive_json()
        await ws.send_json({"type": "auth", "access_token": self.token})
        if (await ws.receive_json())["type"] != "auth_ok":
            raise Failure("websocket authentication refused")
        counter = [0]

        async def call(kind, **fields):
            counter[0] += 1
            await ws.send_json({"id": counter[0], "type": kind, **fields})
            while True:
                message = await ws.receive_json()
                if message.get("id") == counter[0]:
                    if not message.get("success"):
                        raise Failure(f"{kind}: {message}")
                    return message["result"]
        return ws, call

    async def rest(self, session, method, path, body=None):
        async with session.request(method, f"http://127.0.0.1:{self.http_port}{path}", json=body,
                                   headers={"Authorization": f"Bearer {self.token}"}) as response:
            if response.status >= 300:
                raise Failure(f"{method} {path}: {response.status} {await response.text()}")
            return await response.json()


async def checks(run, devices):
    async with aiohttp.ClientSession() as session:
        await run.onboard(session)
        ws, call = await run.websocket(session)

        async def homegate_entities():
            entities = await call("config/entity_registry/list")
            return [entity for entity in entities if entity["platform"] == "mqtt" and (entity.get("unique_id") or "").startswith("homegate_")]

        async def devices_named():
            return {device["name"]: device for device in await call("config/device_registry/list")
                    if any(identifier[0] == "mqtt" and identifier[1].startswith("homegate_") for identifier in device["identifiers"])}

        # 1. The zoo: every device's entities, per domain.
        reference = run.reference()
        expected = {}
        for row in reference:
            key = (row["fixture"], row["domain"])
            expected[key] = expected.get(key, 0) + 1

        async def zoo_complete():
            entities = await homegate_entities()
            missing = []
            for (fixture, domain), count in sorted(expected.items()):
                prefix = "homegate_hap-" + devices[fixture][0].lower().replace(":", "") + "-"
                have = sum(1 for entity in entities if entity["unique_id"].startswith(prefix) and entity["entity_id"].startswith(domain + "."))
                if have < count:
                    missing.append(f"{fixture} {domain}: {have} of {count}")
            return True if not missing else missing
        await run.eventually(zoo_complete, "every zoo device's entities in Home Assistant", 120)
        log(f"1. every zoo device has homekit_controller's entities in Home Assistant ({len(reference)} entities, {len(devices)} devices)")

        # 1c. Every entity of every discovery config the gateway retains (the demo's accessories,
        # a bridge's and those behind it included) is in Home Assistant's registry.
        configs = run.retained_configs()
        wanted = {component["unique_id"]: topic for topic, config in configs.items()
                  for component in config.get("components", {}).values() if "unique_id" in component}

        async def every_entity():
            have = {entity["unique_id"] for entity in await homegate_entities()}
            missing = sorted(f"{unique_id} ({topic})" for unique_id, topic in wanted.items() if unique_id not in have)
            return True if not missing else missing
        await run.eventually(every_entity, "an entity for every component of every retained discovery config", 60)
        log(f"1c. every component of the {len(configs)} retained discovery configs is an entity ({len(wanted)} entities)")

        # 1b. Words as homekit_controller shows them: the Airversa's Thread status (16: Router) and
        # capabilities (12: Router Eligible End Device); the LG TV's input (identifier 6: HDMI 4).
        async def shown_words():
            entities = await homegate_entities()
            wanted = {("airversa_ap2", "_thread-status_117"): "Router",
                      ("airversa_ap2", "_thread-node-capabilities_115"): "Router Eligible End Device",
                      ("lg_tv", "_active-identifier_53"): "HDMI 4"}
            seen = {}
            for (fixture, suffix), word in wanted.items():
                prefix = "homegate_hap-" + devices[fixture][0].lower().replace(":", "") + "-"
                entity = next((entity for entity in entities if entity["unique_id"].startswith(prefix) and entity["unique_id"].endswith(suffix)), None)
                state = (await run.rest(session, "GET", f"/api/states/{entity['entity_id']}"))["state"] if entity else None
                seen[fixture + suffix] = state
            return True if list(seen.values()) == list(wanted.values()) else seen
        await run.eventually(shown_words, "the Thread sensors' and the TV input's words", 30)
        log("1b. Airversa AP2: Thread Status Router, Thread Capabilities Router Eligible End Device; LG TV: Input Source HDMI 4")

        # 2. Colour.
        async def lamp_entity():
            for entity in await homegate_entities():
                if entity["unique_id"] == "homegate_sim-lamp-1_8":
                    return entity["entity_id"]
            return None
        lamp = await lamp_entity()
        if lamp is None:
            raise Failure("the floor lamp has no light entity")
        state = await run.rest(session, "GET", f"/api/states/{lamp}")
        if "hs" not in state["attributes"].get("supported_color_modes", []):
            raise Failure(f"the floor lamp offers no hs colour: {state['attributes']}")
        await run.rest(session, "POST", "/api/services/light/turn_on", {"entity_id": lamp, "hs_color": [200, 50]})
        topic = "homegate/demo-home/living-room/floor-lamp/lightbulb"

        async def coloured():
            hue, saturation = run.retained(f"{topic}/hue"), run.retained(f"{topic}/saturation")
            state = await run.rest(session, "GET", f"/api/states/{lamp}")
            hs = state["attributes"].get("hs_color")
            if hue == "200" and saturation == "50" and state["state"] == "on" and hs and round(hs[0]) == 200 and round(hs[1]) == 50:
                return True
            return {"hue": hue, "saturation": saturation, "state": state["state"], "hs_color": hs}
        await run.eventually(coloured, "the floor lamp to take colour 200, 50", 30)
        log(f"2. light.turn_on hs_color [200, 50] on {lamp}: hue 200 and saturation 50 retained, Home Assistant shows them")

        # 3. Rename, watching the light's every state change: the config moves its availability
        # and state topics, which must be there (retained) when Home Assistant follows it.
        events, events_call = await run.websocket(session)
        await events_call("subscribe_events", event_type="state_changed")
        changes = []

        async def watch():
            async for message in events:
                data = message.json()
                if data.get("type") == "event" and data["event"]["data"]["entity_id"] == lamp:
                    new_state = data["event"]["data"]["new_state"]
                    changes.append((time.monotonic(), new_state["state"] if new_state else None,
                                    (new_state or {}).get("attributes", {}).get("brightness")))
        watcher = asyncio.create_task(watch())
        renaming = time.monotonic()
        run.request("accessory/rename", {"accessory": "sim-lamp-1", "newName": "Standing Lamp"})

        async def renamed():
            state = await run.rest(session, "GET", f"/api/states/{lamp}")
            named = await devices_named()
            name = state["attributes"].get("friendly_name")
            return True if name == "Standing Lamp" and "Standing Lamp" in named and "Floor Lamp" not in named else {"friendly_name": name}
        await run.eventually(renamed, "the renamed lamp to show only its new name", 30)
        # A late state change the rename caused would come before the one of a change made after
        # it (Home Assistant takes the MQTT messages in order): the lamp's brightness changed on
        # the device is the barrier, waited for instead of a fixed delay.
        barrier = len(changes)
        run.request("simulator/update", {"accessory": "sim-lamp-1", "characteristic": "brightness", "value": 37})

        async def barrier_seen():
            return True if any(brightness not in (None, changes[barrier - 1][2] if barrier else None)
                               for _, _, brightness in changes[barrier:]) else {"changes since the rename": len(changes) - barrier}
        await run.eventually(barrier_seen, "the brightness set on the lamp after the rename to reach Home Assistant", 30)
        watcher.cancel()
        await events.close()
        watched = time.monotonic()
        unavailable, since = 0.0, None
        for at, state, _ in changes:
            if state in ("unavailable", None) and since is None:
                since = at
            elif state not in ("unavailable", None) and since is not None:
                unavailable, since = unavailable + at - since, None
        if since is not None:
            unavailable += watched - since
        shown = ", ".join(f"{state} at +{1000 * (at - renaming):.0f} ms" for at, state, _ in changes) or "no state change"
        if unavailable > 0 or any(state in ("unavailable", "unknown", None) for _, state, _ in changes):
            raise Failure(f"the renamed light was unavailable or unknown for {1000 * unavailable:.0f} ms: {shown}")
        log(f"3. accessory/rename Floor Lamp -> Standing Lamp: the device and the light are called Standing Lamp, nothing else; "
            f"unavailable for 0 ms, never unknown (state changes: {shown})")

        # 4. Remove, restart.
        run.request("accessory/remove", {"accessory": "sim-coffee-machine"})

        async def coffee_gone():
            return True if "Coffee Machine" not in await devices_named() else "Coffee Machine still there"
        await run.eventually(coffee_gone, "the removed Coffee Machine to leave Home Assistant", 30)
        run.homegate.send_signal(signal.SIGTERM)
        run.homegate.wait(timeout=30)
        run.homegate = run.start("homegate-restarted", run.homegate.args)
        run.wait_for(lambda: run.retained("homegate/$state") == "online", "the restarted gateway to be online", 30)
        # The restarted gateway republishes every config at its synchronisation; wait for the lamp's to be back, then check.
        run.wait_for(lambda: "Standing Lamp" in (run.retained("homeassistant/device/homegate_sim-lamp-1/config") or ""),
                     "the restarted gateway's discovery configs", 30)
        named = await devices_named()
        if "Coffee Machine" in named:
            raise Failure("the removed Coffee Machine came back after the restart")
        if run.retained("homeassistant/device/homegate_sim-coffee-machine/config"):
            raise Failure("the removed Coffee Machine's discovery config is retained again")
        with open(os.path.join(run.folder, "homegate-restarted.log")) as file:
            if "sim-coffee-machine" in file.read():
                raise Failure("the restarted gateway mentions the removed Coffee Machine")
        log("4. accessory/remove Coffee Machine: gone from Home Assistant, and still gone after the gateway restarted")

        # 5. Home Assistant's log.
        await ws.close()
    with open(os.path.join(run.folder, "home-assistant.log")) as file:
        text = file.read()
    # Every error or warning of the MQTT integration or the templates; and any other logged error
    # whose traceback passes through the MQTT integration (an entity that failed to set up from
    # its discovery config is logged by the dispatcher, not by the integration).
    entries = re.split(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", text)
    errors = [entry.splitlines()[0] + "\n" + "".join(line + "\n" for line in entry.splitlines()[1:][-6:]) for entry in entries
              if (re.search(r"(ERROR|WARNING).*\[homeassistant\.(components\.mqtt|helpers\.template)", entry.split("\n", 1)[0])
                  or (re.search(r"^\S+ \S+ ERROR", entry) and "components/mqtt" in entry))
              and "The connection was lost" not in entry
              # Home Assistant's own echo: removing a device whose config has an entity disabled by
              # default (Last seen) removes that entity's registry entry, whose hook publishes an
              # empty config on the device's topic; Home Assistant then finds nothing left to
              # clean up at its own message and warns (the gateway cleared the topic once).
              and "No device components to cleanup for homegate_" not in entry]
    if errors:
        raise Failure("Home Assistant logged errors about MQTT:\n" + "".join(errors[:20]))
    log("5. Home Assistant logged no error or warning of its MQTT integration or its templates")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--homegate", required=True)
    parser.add_argument("--hass", required=True)
    parser.add_argument("--zoo-python", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder with every log")
    args = parser.parse_args()
    run = Run(args)
    started = time.monotonic()
    try:
        run.start_broker()
        devices = run.start_zoo()
        log(f"Mosquitto on {run.mqtt_port}; {len(devices)} zoo devices served over HAP")
        run.start_homegate()
        for fixture, (device, port) in sorted(devices.items()):
            run.pair(port)
        log(f"homegate online, {len(devices)} zoo devices paired")
        run.start_home_assistant()
        log(f"Home Assistant serving on {run.http_port}")
        asyncio.run(checks(run, devices))
        log(f"all checks passed in {time.monotonic() - started:.0f} s")
        return 0
    except Failure as failure:
        log(f"FAILED: {failure}")
        args.keep = True

        return 1
    finally:
        run.close(args.keep)


if __name__ == "__main__":
    sys.exit(main())
