// What a dashboard tile says and does: an accessory's main service, its state in words ("On, 40%",
// "21.5 °C", "Locked") and the one-tap action on its primary characteristic (a toggle, lock or
// unlock, open or close), from the retained values. Pure: `valueOf(service, type)` gives a
// characteristic's current value (parsed JSON) or undefined; checked by Tests/WebUI/tiles_test.mjs.

/** Services that are never an accessory's main one. */
const SIDE_SERVICES = new Set(["accessory-information", "protocol-information", "hap-protocol-information", "battery", "battery-service",
  "microphone", "speaker-service", "camera-control", "data-stream-transport-management", "siri", "pairing", "service-label"]);

const LOCK_WORDS = {0: "Unlocked", 1: "Locked", 2: "Jammed", 3: "Lock state unknown"};
const DOOR_WORDS = {0: "Open", 1: "Closed", 2: "Opening", 3: "Closing", 4: "Stopped"};
const MODE_WORDS = {0: "Off", 1: "Heat", 2: "Cool", 3: "Auto"};
const SENSOR_TYPES = new Set(["temperature-sensor", "humidity-sensor", "light-sensor", "air-quality-sensor", "carbon-dioxide-sensor",
  "motion-sensor", "contact-sensor", "occupancy-sensor", "leak-sensor", "smoke-sensor"]);

export const THERMOSTAT_MODES = MODE_WORDS;

/** The service a tile shows: the primary one, else the first that is not a side service. */
export function mainService(accessory) {
  const services = accessory.services ?? [];
  return services.find((service) => service.primary && !SIDE_SERVICES.has(service.type))
    ?? services.find((service) => !SIDE_SERVICES.has(service.type))
    ?? services[0] ?? null;
}

export function isCamera(accessory) {
  return (accessory.services ?? []).some((service) => service.type === "camera-rtp-stream-management");
}

export function isSensor(service) {
  return SENSOR_TYPES.has(service?.type);
}

/** The characteristic of `type` in a service, or undefined. */
export function characteristicOf(service, type) {
  return service?.characteristics?.find((characteristic) => characteristic.type === type);
}

function degrees(value) {
  return `${Math.round(value * 10) / 10} °C`;
}

/** The tile's state in words. */
export function stateWords(accessory, service, valueOf) {
  if (isCamera(accessory)) return "Camera";
  if (accessory.bridged?.length && (!service || SIDE_SERVICES.has(service.type))) {
    return `Bridge for ${accessory.bridged.length} accessor${accessory.bridged.length === 1 ? "y" : "ies"}`;
  }
  if (!service) return "";
  const value = (type) => valueOf(service, type);
  const percent = (type) => (typeof value(type) === "number" ? `, ${Math.round(value(type))}%` : "");
  switch (service.type) {
  case "lightbulb":
    if (value("on") === undefined) return "No value yet";
    return value("on") ? `On${percent("brightness")}` : "Off";
  case "fan": case "fanv2": case "fan-v2": case "air-purifier": {
    const on = value("active") ?? value("on");
    if (on === undefined) return "No value yet";
    return on === true || on === 1 ? `On${percent("rotation-speed")}` : "Off";
  }
  case "lock-mechanism": {
    const current = value("lock-current-state");
    const target = value("lock-target-state");
    if (current === undefined) return "No value yet";
    if (target !== undefined && current !== 2 && current !== 3 && target !== current) return target === 1 ? "Locking…" : "Unlocking…";
    return LOCK_WORDS[current] ?? `State ${current}`;
  }
  case "garage-door-opener": {
    const current = value("current-door-state");
    if (current === undefined) return "No value yet";
    return (DOOR_WORDS[current] ?? `State ${current}`) + (value("obstruction-detected") === true ? ", obstructed" : "");
  }
  case "thermostat": {
    const mode = value("target-heating-cooling-state");
    const target = value("target-temperature");
    const current = value("current-temperature");
    const parts = [];
    if (mode !== undefined) parts.push(mode === 0 || target === undefined ? MODE_WORDS[mode] ?? `Mode ${mode}` : `${MODE_WORDS[mode] ?? "Mode " + mode} to ${degrees(target)}`);
    if (typeof current === "number") parts.push(`${degrees(current)} now`);
    return parts.join(", ") || "No value yet";
  }
  case "window-covering": {
    const position = value("current-position");
    if (typeof position !== "number") return "No value yet";
    return position <= 0 ? "Closed" : position >= 100 ? "Open" : `Open ${Math.round(position)}%`;
  }
  case "temperature-sensor": {
    const current = value("current-temperature");
    return typeof current === "number" ? degrees(current) : "No value yet";
  }
  case "humidity-sensor": {
    const current = value("current-relative-humidity");
    return typeof current === "number" ? `${Math.round(current)}% humidity` : "No value yet";
  }
  case "light-sensor": {
    const current = value("current-ambient-light-level");
    return typeof current === "number" ? `${Math.round(current)} lx` : "No value yet";
  }
  case "motion-sensor": return wordsOf(value("motion-detected"), "Motion", "No motion");
  case "occupancy-sensor": return wordsOf(value("occupancy-detected"), "Occupied", "Not occupied");
  case "contact-sensor": return wordsOf(value("contact-sensor-state"), "Open", "Closed");
  case "leak-sensor": return wordsOf(value("leak-detected"), "Leak!", "Dry");
  case "smoke-sensor": return wordsOf(value("smoke-detected"), "Smoke!", "No smoke");
  case "switch": case "outlet": case "stateless-programmable-switch":
  default: {
    const on = value("on");
    if (on !== undefined) return on ? "On" : "Off";
    const first = (service.characteristics ?? []).find((characteristic) => characteristic.perms?.includes("pr") && valueOf(service, characteristic.type) !== undefined);
    return first ? String(valueOf(service, first.type)) : "";
  }
  }
}

function wordsOf(value, yes, no) {
  if (value === undefined) return "No value yet";
  return value === true || value === 1 ? yes : no;
}

/** The one-tap action: {type, value, words} (the characteristic to write, the value, what the
 *  button says: "Turn on"), or null when a tap has nothing to do (a sensor, a thermostat). */
export function primaryAction(accessory, service, valueOf) {
  if (!service || isCamera(accessory)) return null;
  const writable = (type) => characteristicOf(service, type)?.perms?.includes("pw");
  const value = (type) => valueOf(service, type);
  switch (service.type) {
  case "lock-mechanism":
    if (!writable("lock-target-state")) return null;
    return value("lock-current-state") === 1 || value("lock-target-state") === 1
      ? {type: "lock-target-state", value: 0, words: "Unlock"} : {type: "lock-target-state", value: 1, words: "Lock"};
  case "garage-door-opener":
    if (!writable("target-door-state")) return null;
    return value("target-door-state") === 1 || value("current-door-state") === 1
      ? {type: "target-door-state", value: 0, words: "Open"} : {type: "target-door-state", value: 1, words: "Close"};
  case "window-covering":
    if (!writable("target-position")) return null;
    return (value("current-position") ?? 0) > 0
      ? {type: "target-position", value: 0, words: "Close"} : {type: "target-position", value: 100, words: "Open"};
  default:
    if (writable("on")) return value("on") ? {type: "on", value: false, words: "Turn off"} : {type: "on", value: true, words: "Turn on"};
    if (writable("active")) return value("active") === 1 ? {type: "active", value: 0, words: "Turn off"} : {type: "active", value: 1, words: "Turn on"};
    return null;
  }
}

/** Whether the tile shows its accessory as "on" (drawn lit). */
export function isActive(service, valueOf) {
  if (!service) return false;
  const on = valueOf(service, "on") ?? valueOf(service, "active");
  if (on === true || on === 1) return true;
  if (service.type === "lock-mechanism") return valueOf(service, "lock-current-state") === 0;
  if (service.type === "garage-door-opener") return valueOf(service, "current-door-state") === 0;
  return false;
}

/** When an accessory was last heard from (its `$last-seen`, ISO 8601 in UTC) in words, as of
 *  `now`: "just now" within a minute, then minutes, hours and days ago; undefined when the text
 *  is no date. */
export function lastSeenWords(iso, now = new Date()) {
  const when = new Date(iso);
  if (!iso || Number.isNaN(when.getTime())) return undefined;
  const seconds = Math.max(0, Math.round((now.getTime() - when.getTime()) / 1000));
  if (seconds < 60) return "Last seen just now";
  const [count, unit] = seconds < 3600 ? [Math.floor(seconds / 60), "minute"]
    : seconds < 86_400 ? [Math.floor(seconds / 3600), "hour"] : [Math.floor(seconds / 86_400), "day"];
  return `Last seen ${count} ${unit}${count === 1 ? "" : "s"} ago`;
}

/** An accessory's options (its `$layout` entry's `options`, docs/configuration.md "The options
 *  section") in words, one line each: `Disabled: followed, nothing published`, `Not published:
 *  outlet/outlet-in-use`, `lightbulb/brightness: debounce 0.3 s`. Empty when it has none. */
export function optionWords(options) {
  if (!options) return [];
  const lines = [];
  if (options.disabled) lines.push("Disabled: followed, nothing published or discovered");
  if (options.exclude?.length) lines.push(`Not published: ${options.exclude.join(", ")}`);
  const own = publishWords(options, true);
  if (own) lines.push(`All values: ${own}`);
  for (const [path, entry] of Object.entries(options.characteristics ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    const words = publishWords(entry, false);
    if (words) lines.push(`${path}: ${words}`);
  }
  return lines;
}

function publishWords(entry, isAccessory) {
  const words = [];
  if (entry.retain === false) words.push("not retained");
  if (entry.retain === true) words.push("retained");
  if (entry.qos !== undefined) words.push(`QoS ${entry.qos}`);
  if (entry.debounce) words.push(`debounce ${entry.debounce / 1000} s`);
  if (entry.throttle) words.push(`throttle ${entry.throttle / 1000} s`);
  if (entry.homeassistant === null) words.push(isAccessory ? "not in Home Assistant" : "no Home Assistant entity");
  else if (entry.homeassistant) {
    const named = entry.homeassistant.name ? `“${entry.homeassistant.name}”` : "";
    const kind = entry.homeassistant.device_class ? ` (${entry.homeassistant.device_class})` : "";
    words.push(`in Home Assistant as ${named}${kind}`.trim());
  }
  return words.join(", ");
}
