// The dashboard's words and one-tap actions (Sources/WebUI/Assets/tiles.js) and the colour
// wheel's geometry (controls.js), on services shaped as $layout describes them.
// Run by scripts/test-web-ui: node --test Tests/WebUI/
import test from "node:test";
import assert from "node:assert/strict";
import {mainService, stateWords, primaryAction, isActive, lastSeenWords, optionWords} from "../../Sources/WebUI/Assets/tiles.js";
import {wheelValue, wheelPoint} from "../../Sources/WebUI/Assets/controls.js";

const rw = ["pr", "pw", "ev"], ro = ["pr", "ev"];
function service(type, characteristics, extra = {}) {
  return {type, topic: `t/${type}`, ...extra,
    characteristics: Object.entries(characteristics).map(([name, perms]) => ({type: name, topic: `t/${type}/${name}`, perms}))};
}
const getter = (values) => (svc, type) => values[type];

test("the main service: the primary one, never the accessory information", () => {
  const info = service("accessory-information", {name: ro});
  const light = service("lightbulb", {on: rw});
  assert.equal(mainService({services: [info, light]}), light);
  const outlet = service("outlet", {on: rw}, {primary: true});
  assert.equal(mainService({services: [info, light, outlet]}), outlet);
});

test("a light: On, 40% / Off, and a tap toggles on", () => {
  const light = service("lightbulb", {on: rw, brightness: rw});
  const accessory = {services: [light]};
  assert.equal(stateWords(accessory, light, getter({on: true, brightness: 40})), "On, 40%");
  assert.equal(stateWords(accessory, light, getter({on: false, brightness: 40})), "Off");
  assert.deepEqual(primaryAction(accessory, light, getter({on: false})), {type: "on", value: true, words: "Turn on"});
  assert.deepEqual(primaryAction(accessory, light, getter({on: true})), {type: "on", value: false, words: "Turn off"});
  assert.equal(isActive(light, getter({on: true})), true);
});

test("a sensor says its value and has no tap", () => {
  const sensor = service("temperature-sensor", {"current-temperature": ro});
  assert.equal(stateWords({services: [sensor]}, sensor, getter({"current-temperature": 21.54})), "21.5 °C");
  assert.equal(primaryAction({services: [sensor]}, sensor, getter({"current-temperature": 21})), null);
});

test("a lock: Locked, a tap unlocks; while moving it says so", () => {
  const lock = service("lock-mechanism", {"lock-current-state": ro, "lock-target-state": rw});
  const accessory = {services: [lock]};
  assert.equal(stateWords(accessory, lock, getter({"lock-current-state": 1, "lock-target-state": 1})), "Locked");
  assert.equal(stateWords(accessory, lock, getter({"lock-current-state": 1, "lock-target-state": 0})), "Unlocking…");
  assert.deepEqual(primaryAction(accessory, lock, getter({"lock-current-state": 1, "lock-target-state": 1})), {type: "lock-target-state", value: 0, words: "Unlock"});
  assert.deepEqual(primaryAction(accessory, lock, getter({"lock-current-state": 0, "lock-target-state": 0})), {type: "lock-target-state", value: 1, words: "Lock"});
});

test("a garage door: Closed, a tap opens", () => {
  const door = service("garage-door-opener", {"current-door-state": ro, "target-door-state": rw, "obstruction-detected": ro});
  const accessory = {services: [door]};
  assert.equal(stateWords(accessory, door, getter({"current-door-state": 1, "obstruction-detected": false})), "Closed");
  assert.deepEqual(primaryAction(accessory, door, getter({"current-door-state": 1, "target-door-state": 1})), {type: "target-door-state", value: 0, words: "Open"});
});

test("a thermostat: its mode and target in words, the temperature now", () => {
  const thermostat = service("thermostat", {"current-temperature": ro, "target-temperature": rw, "target-heating-cooling-state": rw});
  const words = stateWords({services: [thermostat]}, thermostat, getter({"current-temperature": 19.5, "target-temperature": 21, "target-heating-cooling-state": 1}));
  assert.equal(words, "Heat to 21 °C, 19.5 °C now");
  assert.equal(primaryAction({services: [thermostat]}, thermostat, getter({})), null);
});

test("the colour wheel: hue clockwise from the top, saturation from the centre", () => {
  assert.deepEqual(wheelValue(0, -80, 80), {hue: 0, saturation: 100});
  assert.deepEqual(wheelValue(40, 0, 80), {hue: 90, saturation: 50});
  assert.deepEqual(wheelValue(0, 20, 80), {hue: 180, saturation: 25});
  assert.deepEqual(wheelValue(-200, 0, 80), {hue: 270, saturation: 100});
  const {dx, dy} = wheelPoint(90, 50, 80);
  assert.ok(Math.abs(dx - 40) < 1e-9 && Math.abs(dy) < 1e-9);
  for (const [hue, saturation] of [[30, 60], [200, 50], [359, 1]]) {
    const point = wheelPoint(hue, saturation, 100);
    assert.deepEqual(wheelValue(point.dx, point.dy, 100), {hue, saturation});
  }
});

test("last seen in words: just now, then minutes, hours and days ago; nothing for a text that is no date", () => {
  const now = new Date("2026-11-28T12:00:00Z");
  assert.equal(lastSeenWords("2026-11-28T11:59:30Z", now), "Last seen just now");
  assert.equal(lastSeenWords("2026-11-28T12:00:05Z", now), "Last seen just now", "a clock a little ahead");
  assert.equal(lastSeenWords("2026-11-28T11:59:00Z", now), "Last seen 1 minute ago");
  assert.equal(lastSeenWords("2026-11-28T11:15:00Z", now), "Last seen 45 minutes ago");
  assert.equal(lastSeenWords("2026-11-28T09:00:00Z", now), "Last seen 3 hours ago");
  assert.equal(lastSeenWords("2026-11-27T11:00:00Z", now), "Last seen 1 day ago");
  assert.equal(lastSeenWords("2026-11-18T12:00:00Z", now), "Last seen 10 days ago");
  assert.equal(lastSeenWords("yesterday", now), undefined);
  assert.equal(lastSeenWords(undefined, now), undefined);
});

test("an accessory's options in words, one line each", () => {
  assert.deepEqual(optionWords(undefined), []);
  assert.deepEqual(optionWords({}), []);
  assert.deepEqual(optionWords({
    disabled: true, exclude: ["outlet/outlet-in-use"], retain: false, qos: 0, homeassistant: {name: "Sofa Light"},
    characteristics: {"lightbulb/brightness": {debounce: 300}, "battery-level": {throttle: 600000, homeassistant: null}},
  }), [
    "Disabled: followed, nothing published or discovered",
    "Not published: outlet/outlet-in-use",
    "All values: not retained, QoS 0, in Home Assistant as “Sofa Light”",
    "battery-level: throttle 600 s, no Home Assistant entity",
    "lightbulb/brightness: debounce 0.3 s",
  ]);
});
