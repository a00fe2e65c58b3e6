// The home view: rooms, accessories (category, reachability, bridges), one card per service with
// its characteristics' values live and a control for each writable one, action sets to execute.
// Values shown are the retained topics only: a write shows pending, then the device's
// acknowledgement (or its HAP error in words), and the control follows the retained value again.

import {h, append, mqttDetails, codeLine, copyButton, mosquittoPub, statusLine, setStatus, humanize, formatValue} from "./dom.js";
import {categoryIcon} from "./icons.js";
import {HttpError, errorText} from "./api.js";

const UNITS = {percentage: "%", celsius: "°C", fahrenheit: "°F", arcdegrees: "°", lux: "lx", seconds: "s"};
const NUMERIC = new Set(["int", "float", "uint8", "uint16", "uint32", "uint64"]);

/** ctx: {store, commands, session, admin, home, watch(topic, fn)}; watches end when the view is rendered again. */
export function renderHome(ctx) {
  const {home} = ctx;
  const byId = ctx.store.accessoriesById(home);
  return h("section", {className: "home", "aria-labelledby": "home-title", dataset: {testid: "home"}},
    h("div", {className: "section-head"},
      h("h1", {id: "home-title", dataset: {testid: "home-name"}}, home.name),
      home.primary ? h("span", {className: "badge"}, "primary home") : null,
      mqttDetails(home.topic, `mosquitto_sub -v -t '${home.topic}/#'`, "MQTT: the home")),
    home.zones.length ? zonesLine(home) : null,
    home.actionSets.length ? actionSets(ctx, home) : null,
    roomJumps(home),
    home.rooms.map((room) => renderRoom(ctx, home, room, byId)));
}

function zonesLine(home) {
  return h("p", {className: "zones", dataset: {testid: "zones"}}, h("strong", {}, "Zones: "),
    home.zones.map((zone, index) => [index ? "; " : "", `${zone.name} (${zone.rooms.join(", ") || "no rooms"})`]));
}

function roomJumps(home) {
  return h("nav", {className: "room-jumps", "aria-label": "Rooms"},
    home.rooms.map((room) => h("a", {href: `#room-${room.id}`, onclick: (event) => jumpTo(event, `room-${room.id}`)}, room.name)));
}

// The hash names the view; jumping to a room scrolls without changing it.
function jumpTo(event, id) {
  event.preventDefault();
  const target = document.getElementById(id);
  target?.scrollIntoView({block: "start"});
  target?.querySelector("h2")?.focus();
}

function actionSets(ctx, home) {
  return h("section", {className: "scenes", "aria-labelledby": "scenes-title", dataset: {testid: "scenes"}},
    h("h2", {id: "scenes-title"}, "Action sets"),
    h("ul", {className: "plain"}, home.actionSets.map((set) => {
      const status = statusLine("execute-status", `execute:${home.id}:${set.id}`);
      const topic = `${home.topic}/$action-sets/${set.id}/execute`;
      return h("li", {className: "scene", dataset: {testid: "scene", name: set.name}},
        h("span", {className: "scene-name"}, set.name),
        h("span", {className: "muted"}, ` ${set.actions.length} action${set.actions.length === 1 ? "" : "s"} `),
        h("button", {type: "button", dataset: {testid: "execute"}, onclick: () => executeSet(ctx, home, set, status)}, "Execute"),
        status,
        mqttDetails(topic, mosquittoPub(topic, ""), "MQTT: execute"));
    })));
}

async function executeSet(ctx, home, set, status) {
  setStatus(status, "pending", "executing…");
  try {
    const answer = await ctx.commands.request("action-set", "execute", {home: home.name, actionSet: set.id});
    if (!answer.ok) return setStatus(status, "error", errorText(answer));
    const results = answer.data?.results ?? [];
    const good = results.filter((result) => result.ok).length;
    setStatus(status, answer.data?.allOk === false ? "error" : "ok", `executed: ${good} of ${results.length} writes acknowledged`);
  } catch (error) {
    setStatus(status, "error", httpText(error));
  }
}

function renderRoom(ctx, home, room, byId) {
  const accessories = room.accessories;
  return h("section", {className: "room", id: `room-${room.id}`, "aria-labelledby": `room-title-${room.id}`,
    dataset: {testid: "room", room: room.id}},
  h("div", {className: "section-head"},
    h("h2", {id: `room-title-${room.id}`, tabindex: "-1", dataset: {testid: "room-name"}}, room.name),
    h("span", {className: "muted"}, accessories === null ? "loading…" : `${accessories.length} accessor${accessories.length === 1 ? "y" : "ies"}`),
    mqttDetails(room.topic, `mosquitto_sub -v -t '${room.topic}/#'`, "MQTT: the room")),
  accessories === null ? null
    : h("div", {className: "accessories"}, accessories.map((accessory) => renderAccessory(ctx, home, accessory, byId))));
}

function renderAccessory(ctx, home, accessory, byId) {
  const reachable = h("span", {className: "badge reach", dataset: {testid: "reachable"}});
  const article = h("article", {className: "accessory", "aria-labelledby": `acc-${cssId(accessory.id)}`,
    dataset: {testid: "accessory", accessory: accessory.id}});
  const showReachability = (payload) => {
    const state = payload === "true" ? "reachable" : payload === "false" ? "unreachable" : "unknown";
    reachable.dataset.state = state;
    reachable.textContent = {reachable: "✓ reachable", unreachable: "✕ unreachable", unknown: "? reachability unknown"}[state];
    article.classList.toggle("unreachable", state === "unreachable");
  };
  ctx.watch(`${accessory.topic}/$reachable`, showReachability);
  showReachability(ctx.store.get(`${accessory.topic}/$reachable`));
  const identifyStatus = statusLine("identify-status", `identify:${accessory.id}`);
  append(article,
    h("header", {className: "accessory-head"},
      categoryIcon(accessory.category),
      h("div", {},
        h("h3", {id: `acc-${cssId(accessory.id)}`, dataset: {testid: "accessory-name"}}, accessory.name),
        h("p", {className: "muted"}, h("span", {dataset: {testid: "category"}}, humanize(accessory.category || "other")),
          accessory.model ? ` · ${accessory.manufacturer ? accessory.manufacturer + " " : ""}${accessory.model}` : "")),
      reachable),
    bridgeLine(accessory, byId),
    isCamera(accessory) ? snapshotFigure(ctx, home, accessory) : null,
    accessory.services.map((service) => renderService(ctx, service)),
    h("div", {className: "accessory-foot"},
      h("button", {type: "button", className: "secondary", dataset: {testid: "identify"},
        onclick: () => identify(ctx, home, accessory, identifyStatus)}, "Identify"),
      identifyStatus,
      mqttDetails(`${accessory.topic}`, mosquittoPub(`${ctx.session.base}/$request/accessory/identify`, JSON.stringify({accessory: accessory.id})),
        "MQTT: the accessory, identify")));
  return article;
}

function isCamera(accessory) {
  return accessory.services.some((service) => service.type === "camera-rtp-stream-management");
}

// A camera's last snapshot (`<accessory>/$snapshot`, which the feed hands over as a data: URL),
// and a button that asks for a new one.
function snapshotFigure(ctx, home, accessory) {
  const image = h("img", {className: "snapshot", alt: `${accessory.name}: the last snapshot`, dataset: {testid: "snapshot"}, hidden: true});
  const note = h("figcaption", {className: "muted"}, "No snapshot yet.");
  const show = (payload) => {
    if (!payload?.startsWith("data:image/")) return;
    image.src = payload;
    image.hidden = false;
    note.textContent = `Snapshot of ${new Date().toLocaleTimeString()}`;
  };
  ctx.watch(`${accessory.topic}/$snapshot`, show);
  show(ctx.store.get(`${accessory.topic}/$snapshot`));
  const status = statusLine("snapshot-status", `snapshot:${accessory.id}`);
  const take = async () => {
    setStatus(status, "pending", "taking a snapshot…");
    try {
      const answer = await ctx.commands.request("accessory", "snapshot", {home: home.name, accessory: accessory.id});
      setStatus(status, answer.ok ? "ok" : "error", answer.ok ? "snapshot taken" : errorText(answer));
    } catch (error) {
      setStatus(status, "error", httpText(error));
    }
  };
  return h("figure", {className: "camera", dataset: {testid: "camera"}}, image, note,
    h("button", {type: "button", className: "secondary", dataset: {testid: "take-snapshot"}, onclick: take}, "Snapshot"), status);
}

function bridgeLine(accessory, byId) {
  if (accessory.bridge) {
    const bridge = byId.get(accessory.bridge);
    return h("p", {className: "bridge-line", dataset: {testid: "bridged-by"}}, `Behind the bridge ${bridge ? bridge.name : accessory.bridge}`);
  }
  if (accessory.bridged?.length) {
    const names = accessory.bridged.map((id) => {
      const behind = byId.get(id);
      return behind ? `${behind.name} (${behind.roomName})` : id;
    });
    return h("p", {className: "bridge-line", dataset: {testid: "bridge-of"}}, `Bridge for: ${names.join(", ")}`);
  }
  return null;
}

async function identify(ctx, home, accessory, status) {
  setStatus(status, "pending", "identifying…");
  try {
    const answer = await ctx.commands.request("accessory", "identify", {home: home.name, accessory: accessory.id});
    setStatus(status, answer.ok ? "ok" : "error", answer.ok ? "identify sent" : errorText(answer));
  } catch (error) {
    setStatus(status, "error", httpText(error));
  }
}

function renderService(ctx, service) {
  const title = service.name || humanize(service.type);
  return h("section", {className: "service card", dataset: {testid: "service", topic: service.topic}},
    h("h4", {}, title, title.toLowerCase() !== humanize(service.type).toLowerCase() ? h("span", {className: "muted"}, ` · ${humanize(service.type)}`) : null,
      service.primary ? h("span", {className: "muted"}, " · primary") : null),
    h("div", {className: "chars"}, service.characteristics.map((characteristic) => renderCharacteristic(ctx, characteristic))),
    mqttDetails(service.topic, mosquittoPub(`${service.topic}/set`, JSON.stringify(sampleObject(ctx, service))), "MQTT: the whole service"));
}

// A service-level set with the current values of its writable characteristics (section 3).
function sampleObject(ctx, service) {
  const object = {};
  for (const characteristic of service.characteristics) {
    if (!characteristic.perms?.includes("pw")) continue;
    const value = parseValue(ctx.store.get(characteristic.topic));
    if (value !== undefined) object[characteristic.topic.split("/").pop()] = value;
  }
  return object;
}

function parseValue(payload) {
  if (payload === undefined) return undefined;
  try { return JSON.parse(payload); } catch { return payload; }
}

/** One characteristic: its name, the retained value (with unit and label), a control when writable,
 *  a read button when readable, the write's status and its MQTT topic. */
function renderCharacteristic(ctx, characteristic) {
  const topic = characteristic.topic;
  const perms = characteristic.perms ?? [];
  const row = {
    ctx, characteristic, topic,
    readable: perms.includes("pr"), writable: perms.includes("pw"),
    value: h("output", {className: "value", dataset: {testid: "value"}}),
    status: statusLine("write-status", `write:${topic}`),
    command: h("code", {dataset: {testid: "command"}}),
    controlSlot: h("div", {className: "control"}),
    pending: 0,
    sync: () => {},
  };
  const element = h("div", {className: "char", dataset: {testid: "char", topic}},
    h("span", {className: "char-name", id: `name-${cssId(topic)}`}, humanize(characteristic.type)),
    row.value,
    row.controlSlot,
    row.status,
    h("details", {className: "mqtt", dataset: {key: `MQTT ${topic}`}},
      h("summary", {}, "MQTT", h("span", {className: "sr-only"}, ` of ${humanize(characteristic.type)}`)),
      codeLine(topic, "topic", "topic"),
      h("div", {className: "code-line"}, row.command, copyButton(() => row.command.textContent, "command"))),
    row.readable ? h("button", {type: "button", className: "secondary small read", id: `read-${cssId(topic)}`, dataset: {testid: "read"},
      "aria-label": `Read ${humanize(characteristic.type)} now`, onclick: () => readNow(row)}, "Read") : null);
  buildControl(row);
  showValue(row);
  ctx.watch(topic, () => showValue(row));
  ctx.watch(`${topic}/label`, () => showValue(row));
  ctx.watch(`${topic}/$meta`, () => { buildControl(row); showValue(row); });
  return element;
}

/** Valid values with their labels: $meta has {value, label}; the layout has the bare values. */
function choices(row) {
  const meta = row.ctx.store.json(`${row.topic}/$meta`);
  const fromMeta = meta && Array.isArray(meta.validValues) ? meta.validValues : null;
  if (fromMeta) return fromMeta.map((entry) => (typeof entry === "object" ? entry : {value: entry}));
  if (Array.isArray(row.characteristic.validValues)) return row.characteristic.validValues.map((value) => ({value}));
  return null;
}

function showValue(row) {
  const payload = row.ctx.store.get(row.topic);
  const value = parseValue(payload);
  const label = row.ctx.store.get(`${row.topic}/label`);
  const unit = UNITS[row.characteristic.unit] ?? row.characteristic.unit ?? "";
  let text;
  if (!row.readable) text = "write-only";
  else if (value === undefined) text = "no value yet";
  else if (label !== undefined) text = `${label} (${formatValue(value)})`;
  else text = `${formatValue(value)}${unit && typeof value === "number" ? (unit === "%" || unit === "°" ? unit : " " + unit) : ""}`;
  row.value.textContent = text;
  row.value.dataset.value = payload ?? "";
  row.command.textContent = row.writable
    ? mosquittoPub(`${row.topic}/set`, payload ?? sampleFor(row))
    : `mosquitto_sub -t '${row.topic}' -C 1`;
  if (row.pending === 0) row.sync();
}

function sampleFor(row) {
  const format = row.characteristic.format;
  if (format === "bool") return "true";
  if (NUMERIC.has(format)) return String(row.characteristic.minValue ?? 0);
  return "text";
}

// Controls ------------------------------------------------------------------------------------------

function buildControl(row) {
  row.controlSlot.replaceChildren();
  row.sync = () => {};
  if (!row.writable) return;
  const {format, minValue, maxValue} = row.characteristic;
  const labelledBy = `name-${cssId(row.topic)}`;
  const valid = choices(row);
  if (format === "bool") switchControl(row, labelledBy);
  else if (valid && valid.length) selectControl(row, labelledBy, valid);
  else if (NUMERIC.has(format) && Number.isFinite(minValue) && Number.isFinite(maxValue)) sliderControl(row, labelledBy);
  else if (NUMERIC.has(format)) textControl(row, labelledBy, "number");
  else if (format === "string") textControl(row, labelledBy, "text");
  else textControl(row, labelledBy, "json");
}

function switchControl(row, labelledBy) {
  const input = h("input", {type: "checkbox", role: "switch", id: `ctl-${cssId(row.topic)}`, "aria-labelledby": labelledBy, dataset: {testid: "switch", live: ""}});
  const words = h("span", {className: "switch-words", "aria-hidden": "true"});
  const show = () => { words.textContent = input.checked ? "on" : "off"; };
  input.addEventListener("change", () => { show(); write(row, input.checked); });
  row.sync = () => { input.checked = parseValue(row.ctx.store.get(row.topic)) === true; show(); };
  row.controlSlot.append(h("label", {className: "switch"}, input, h("span", {className: "track", "aria-hidden": "true"}), words));
}

function selectControl(row, labelledBy, valid) {
  const select = h("select", {id: `ctl-${cssId(row.topic)}`, "aria-labelledby": labelledBy, dataset: {testid: "select", live: ""}},
    valid.map((entry) => h("option", {value: JSON.stringify(entry.value)}, entry.label ? `${entry.label} (${entry.value})` : String(entry.value))));
  select.addEventListener("change", () => write(row, JSON.parse(select.value)));
  row.sync = () => {
    const current = row.ctx.store.get(row.topic);
    if (current !== undefined && ![...select.options].some((option) => option.value === current)) {
      select.append(h("option", {value: current}, `${current} (not a valid value)`));
    }
    if (current !== undefined) select.value = current;
  };
  row.controlSlot.append(select);
}

function sliderControl(row, labelledBy) {
  const {format, minValue, maxValue, minStep} = row.characteristic;
  const step = minStep ?? (format === "float" ? "any" : 1);
  const range = h("input", {type: "range", min: String(minValue), max: String(maxValue), step: String(step),
    id: `ctl-${cssId(row.topic)}`, "aria-labelledby": labelledBy, dataset: {testid: "slider", live: ""}});
  const shown = h("output", {className: "slider-value", dataset: {testid: "slider-value"}});
  const unit = UNITS[row.characteristic.unit] ?? "";
  const show = () => { shown.textContent = `${range.value}${unit}`; };
  range.addEventListener("input", show);
  // While a finger or the mouse holds the thumb, a value arriving (a drifting sensor) must not move it.
  let dragging = false;
  range.addEventListener("pointerdown", () => { dragging = true; });
  for (const end of ["pointerup", "pointercancel"]) range.addEventListener(end, () => { dragging = false; });
  // "change" fires on release (and per key press): one write per gesture, not one per pixel.
  range.addEventListener("change", () => { show(); write(row, numberFor(format, range.value)); });
  row.sync = () => {
    if (dragging) return;
    const value = parseValue(row.ctx.store.get(row.topic));
    if (typeof value === "number") range.value = String(value);
    show();
  };
  row.controlSlot.append(range, shown);
}

function textControl(row, labelledBy, kind) {
  const {format, minValue, maxValue, minStep, maxLen} = row.characteristic;
  const input = h("input", {type: kind === "number" ? "number" : "text", id: `ctl-${cssId(row.topic)}`, "aria-labelledby": labelledBy, dataset: {testid: "input"},
    min: minValue !== undefined ? String(minValue) : null, max: maxValue !== undefined ? String(maxValue) : null,
    step: kind === "number" ? String(minStep ?? "any") : null, maxlength: maxLen ? String(maxLen) : null});
  const form = h("form", {className: "inline"}, input, h("button", {type: "submit", className: "small", dataset: {testid: "set"}}, "Set"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value;
    if (kind === "number") return write(row, numberFor(format, text));
    if (kind === "text") return write(row, text);
    write(row, parseValue(text)); // data, tlv8, unknown formats: JSON when it parses, else the text
  });
  row.sync = () => {
    if (document.activeElement === input) return; // never overwrite what someone is typing
    const value = parseValue(row.ctx.store.get(row.topic));
    input.value = value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);
  };
  row.controlSlot.append(form);
}

function numberFor(format, text) {
  const number = Number(text);
  return format === "float" ? number : Math.round(number);
}

// Writes and reads ----------------------------------------------------------------------------------

function remember(row, kind, text) {
  setStatus(row.status, kind, text);
}

async function write(row, value) {
  row.pending += 1;
  remember(row, "pending", `pending: sending ${formatValue(value)}`);
  try {
    const answer = await row.ctx.commands.write(row.topic, value,
      () => remember(row, "pending", `pending: ${formatValue(value)} sent, waiting for the device`));
    if (answer.ok) remember(row, "ok", `acknowledged in ${answer.ms} ms: ${formatValue(answer.label ?? answer.value)}`);
    else remember(row, "error", errorText(answer));
  } catch (error) {
    remember(row, "error", httpText(error));
  } finally {
    row.pending -= 1;
    // The control returns to the retained value (which the gateway updated before acknowledging).
    if (row.pending === 0) row.sync();
  }
}

async function readNow(row) {
  remember(row, "pending", "pending: reading the device");
  try {
    const answer = await row.ctx.commands.read(row.topic, null);
    if (answer.ok) remember(row, "ok", `read in ${answer.ms} ms: ${formatValue(answer.label ?? answer.value)}`);
    else remember(row, "error", errorText(answer));
  } catch (error) {
    remember(row, "error", httpText(error));
  }
}

export function httpText(error) {
  if (error instanceof HttpError) {
    const code = error.code ?? `HTTP ${error.status}`;
    return error.message && error.message !== code ? `${code}: ${error.message}` : code;
  }
  return String(error.message ?? error);
}

/** A string usable in an id attribute. */
export function cssId(text) {
  return String(text).replace(/[^A-Za-z0-9_-]/g, "_");
}
