// The home view: a dashboard of tiles, one per accessory, in rooms (a quick jump to each), with
// the accessory's state in words and one tap on its primary characteristic; a tap on the name
// opens the accessory's detail (#accessory/<id>): every service and characteristic with its
// control, the controls that fit (controls.js) and 24 h history charts (history.js).
// Values shown are the retained topics only: a write shows pending, then the device's
// acknowledgement (or its HAP error in words), and the control follows the retained value again.

import {h, append, mqttDetails, codeLine, copyButton, mosquittoPub, statusLine, setStatus, humanize, formatValue, removeButton} from "./dom.js";
import {categoryIcon} from "./icons.js";
import {HttpError, errorText} from "./api.js";
import {mainService, stateWords, primaryAction, isActive, isSensor, characteristicOf, lastSeenWords, optionWords} from "./tiles.js";
import {fittedControls} from "./controls.js";
import {chartSvg, sparklineSvg, fetchHistory, withLiveValue, chartStart} from "./history.js";
import {actionSetTopic, attributeTopic, commandTopic, requestTopic} from "./topics.js";

const UNITS = {percentage: "%", celsius: "°C", fahrenheit: "°F", arcdegrees: "°", lux: "lx", seconds: "s"};
const NUMERIC = new Set(["int", "float", "uint8", "uint16", "uint32", "uint64"]);
/** How often a visible camera tile asks for a new snapshot. */
const SNAPSHOT_EVERY_MS = 10_000;

/** ctx: {store, commands, session, admin, home, detail, watch(topic, fn), cleanup(fn)}; watches
 *  end when the view is rendered again. */
export function renderHome(ctx) {
  const {home} = ctx;
  const byId = ctx.store.accessoriesById(home);
  if (ctx.detail) return renderDetail(ctx, home, byId);
  return h("section", {className: "home", "aria-labelledby": "home-title", dataset: {testid: "home"}},
    h("div", {className: "section-head"},
      h("h1", {id: "home-title", dataset: {testid: "home-name"}}, home.name),
      home.primary ? h("span", {className: "badge"}, "primary home") : null,
      mqttDetails(home.topic, `mosquitto_sub -v -t '${home.topic}/#'`, "MQTT: the home")),
    roomJumps(home),
    home.actionSets.length ? actionSets(ctx, home) : null,
    home.rooms.map((room) => renderRoom(ctx, home, room, byId)),
    home.zones.length ? zonesLine(home) : null);
}

function zonesLine(home) {
  return h("p", {className: "zones muted", dataset: {testid: "zones"}}, h("strong", {}, "Zones: "),
    home.zones.map((zone, index) => [index ? "; " : "", `${zone.name} (${zone.rooms.join(", ") || "no rooms"})`]));
}

function roomJumps(home) {
  return h("nav", {className: "room-jumps", "aria-label": "Rooms", dataset: {testid: "room-jumps"}},
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
      const topic = actionSetTopic(home.topic, set.id);
      return h("li", {className: "scene", dataset: {testid: "scene", name: set.name}},
        h("button", {type: "button", className: "secondary", dataset: {testid: "execute"}, "aria-label": `Execute ${set.name}`,
          onclick: () => executeSet(ctx, home, set, status)}, set.name),
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
    dataset: {testid: "room", room: room.id, ...(accessories?.length === 0 ? {empty: ""} : {})}},
  h("div", {className: "section-head"},
    h("h2", {id: `room-title-${room.id}`, tabindex: "-1", dataset: {testid: "room-name"}}, room.name),
    h("span", {className: "muted"}, accessories === null ? "loading…" : `${accessories.length} accessor${accessories.length === 1 ? "y" : "ies"}`),
    mqttDetails(room.topic, `mosquitto_sub -v -t '${room.topic}/#'`, "MQTT: the room")),
  accessories === null ? null
    : h("div", {className: "tiles"}, accessories.map((accessory) => renderTile(ctx, home, accessory, byId))));
}

// Tiles ---------------------------------------------------------------------------------------------

function valueGetter(ctx) {
  return (service, type) => {
    const characteristic = characteristicOf(service, type);
    return characteristic ? parseValue(ctx.store.get(characteristic.topic)) : undefined;
  };
}

/** A tile: the category icon and the state in words on a button that acts on the primary
 *  characteristic (or, without one, a plain box), the name as the link to the detail, the reason
 *  when unreachable, a sparkline on a sensor, the last snapshot on a camera, and the write's status. */
function renderTile(ctx, home, accessory, byId) {
  const service = mainService(accessory);
  const valueOf = valueGetter(ctx);
  const nameId = `tile-name-${cssId(accessory.id)}`;
  const stateId = `tile-state-${cssId(accessory.id)}`;
  const state = h("span", {className: "tile-state", id: stateId, dataset: {testid: "tile-state"}});
  const icon = categoryIcon(accessory.category);
  const status = statusLine("tile-status", `tile:${accessory.id}`);
  const reason = h("p", {className: "tile-reason", dataset: {testid: "tile-reason"}, hidden: true});
  const camera = accessory.services?.some((each) => each.type === "camera-rtp-stream-management");
  const tile = h("div", {className: "tile", dataset: {testid: "tile", accessory: accessory.id, service: service?.topic ?? ""}});
  let action = null;
  const button = h("button", {type: "button", className: "tile-act", dataset: {testid: "tile-action"}, "aria-describedby": stateId},
    icon, state);
  const plain = h("div", {className: "tile-act plain-tile"});
  const pending = {count: 0};
  button.addEventListener("click", () => act(ctx, accessory, service, action, status, pending, show));
  const show = () => {
    const words = stateWords(accessory, service, valueOf);
    state.textContent = words;
    tile.dataset.state = words;
    tile.dataset.active = String(isActive(service, valueOf));
    action = primaryAction(accessory, service, valueOf);
    const actionable = action !== null;
    button.hidden = !actionable;
    plain.hidden = actionable;
    if (actionable) button.setAttribute("aria-label", `${action.words} ${accessory.name}`);
    else plain.replaceChildren(icon, state);
    if (actionable && !button.contains(icon)) button.replaceChildren(icon, state);
  };
  const showReachability = (payload) => {
    const unreachable = payload === "false";
    tile.classList.toggle("unreachable", unreachable);
    button.disabled = unreachable;
    reason.hidden = !unreachable;
    const bridge = accessory.bridge ? byId.get(accessory.bridge) : null;
    const bridgeDown = bridge && ctx.store.get(attributeTopic(bridge.topic, "reachable")) === "false";
    reason.textContent = !unreachable ? "" : bridgeDown ? `Unreachable: its bridge ${bridge.name} is not answering` : "Unreachable: the device is not answering";
  };
  for (const each of service?.characteristics ?? []) ctx.watch(each.topic, show);
  ctx.watch(attributeTopic(accessory.topic, "reachable"), showReachability);
  show();
  showReachability(ctx.store.get(attributeTopic(accessory.topic, "reachable")));
  append(tile, button, plain,
    h("a", {className: "tile-name", id: nameId, href: `#accessory/${encodeURIComponent(accessory.id)}`, dataset: {testid: "tile-name", accessory: accessory.id}},
      accessory.name),
    reason,
    accessory.disabled ? h("p", {className: "tile-reason muted", dataset: {testid: "tile-disabled"}}, "Disabled: not published") : null,
    camera ? tileSnapshot(ctx, home, accessory) : null,
    isSensor(service) ? tileSparkline(ctx, service) : null,
    status);
  return tile;
}

async function act(ctx, accessory, service, action, status, pending, show) {
  if (!action) return;
  const characteristic = characteristicOf(service, action.type);
  pending.count += 1;
  const words = `${action.words.toLowerCase()}`;
  setStatus(status, "pending", `pending: ${words}`);
  try {
    const answer = await ctx.commands.write(characteristic.topic, action.value,
      () => setStatus(status, "pending", `pending: ${words} sent, waiting for the device`));
    if (answer.ok) setStatus(status, "ok", `acknowledged in ${answer.ms} ms: ${words}`);
    else setStatus(status, "error", errorText(answer));
  } catch (error) {
    setStatus(status, "error", httpText(error));
  } finally {
    pending.count -= 1;
    show();
  }
}

/** The main numeric characteristic of a sensor, for its sparkline. */
function sensorCharacteristic(service) {
  return (service.characteristics ?? []).find((each) => each.perms?.includes("pr") && NUMERIC.has(each.format) && /^current-/.test(each.type))
    ?? (service.characteristics ?? []).find((each) => each.perms?.includes("pr") && NUMERIC.has(each.format));
}

function tileSparkline(ctx, service) {
  const characteristic = sensorCharacteristic(service);
  if (!characteristic) return null;
  const slot = h("div", {className: "tile-spark"});
  let fetched = null;
  const draw = () => {
    if (!fetched) return;
    const now = Date.now();
    const live = parseValue(ctx.store.get(characteristic.topic));
    const points = typeof live === "number" ? withLiveValue(fetched.points, now, live) : fetched.points;
    if (points.length < 2) return slot.replaceChildren(); // nothing moved: the value alone says it
    slot.replaceChildren(sparklineSvg(points, {from: chartStart(points, now - 24 * 3_600_000, now), to: now}));
  };
  fetchHistory(ctx.commands, characteristic.topic).then((answer) => {
    if (answer.error) return; // no history: the tile shows the value alone
    fetched = answer;
    draw();
  });
  ctx.watch(characteristic.topic, draw);
  return slot;
}

/** A camera tile's last snapshot, asked for again every SNAPSHOT_EVERY_MS while the tile is on
 *  the screen and the page is visible (IntersectionObserver, document.visibilityState). */
function tileSnapshot(ctx, home, accessory) {
  const image = h("img", {className: "snapshot", alt: `${accessory.name}: the last snapshot`, dataset: {testid: "tile-snapshot"}, hidden: true});
  const figure = h("figure", {className: "tile-camera"}, image);
  const show = (payload) => {
    if (!payload?.startsWith("data:image/")) return;
    image.src = payload;
    image.hidden = false;
    figure.dataset.updated = String(Date.now());
  };
  ctx.watch(attributeTopic(accessory.topic, "snapshot"), show);
  show(ctx.store.get(attributeTopic(accessory.topic, "snapshot")));
  let visible = false;
  let timer = null;
  let stopped = false;
  // What the tile is doing, for the browser test: on the screen or not, a next ask pending or not.
  const mark = () => {
    figure.dataset.onScreen = String(visible);
    figure.dataset.nextAsk = timer === null ? "none" : "pending";
  };
  const take = async () => {
    timer = null;
    mark();
    if (stopped || !visible || document.visibilityState !== "visible") return;
    figure.dataset.requests = String(Number(figure.dataset.requests ?? 0) + 1);
    try {
      const answer = await ctx.commands.request("accessory", "snapshot", {home: home.name, accessory: accessory.id}, 20000);
      if (!answer.ok) figure.dataset.error = errorText(answer);
    } catch (error) {
      if (error instanceof HttpError && error.status === 403) stopped = true; // a guest: the last snapshot only
    }
    schedule();
  };
  const schedule = () => {
    clearTimeout(timer);
    timer = null;
    if (!stopped && visible && document.visibilityState === "visible") timer = setTimeout(take, SNAPSHOT_EVERY_MS);
    mark();
  };
  const observer = new IntersectionObserver((entries) => {
    const now = entries.some((entry) => entry.isIntersecting);
    if (now && !visible) { visible = true; clearTimeout(timer); take(); } else if (!now) { visible = false; clearTimeout(timer); timer = null; mark(); }
  });
  observer.observe(figure);
  const onVisibility = () => { if (document.visibilityState === "visible" && visible) take(); else { clearTimeout(timer); timer = null; mark(); } };
  document.addEventListener("visibilitychange", onVisibility);
  ctx.cleanup(() => {
    stopped = true;
    observer.disconnect();
    clearTimeout(timer);
    document.removeEventListener("visibilitychange", onVisibility);
  });
  return figure;
}

// The detail ----------------------------------------------------------------------------------------

function renderDetail(ctx, home, byId) {
  const accessory = byId.get(ctx.detail);
  const back = h("a", {className: "back", href: "#home", dataset: {testid: "back"}}, "← ", home.name);
  if (!accessory) {
    return h("section", {className: "detail", dataset: {testid: "detail"}}, back,
      h("p", {className: "notice", role: "alert"}, `${home.name} has no accessory ${ctx.detail} (any more).`));
  }
  const main = mainService(accessory);
  return h("section", {className: "detail", "aria-labelledby": "detail-title", dataset: {testid: "detail", accessory: accessory.id}},
    h("nav", {className: "crumbs", "aria-label": "Back"}, back, h("span", {className: "muted"}, ` · ${accessory.roomName}`)),
    h("h1", {id: "detail-title", tabindex: "-1", dataset: {testid: "detail-title"}}, accessory.name),
    renderAccessory(ctx, home, accessory, byId),
    main ? historySection(ctx, main) : null);
}

/** "History, last 24 h": a chart per readable characteristic of the main service (at most four). */
function historySection(ctx, service) {
  const readable = (service.characteristics ?? []).filter((each) => each.perms?.includes("pr") && (each.format === "bool" || NUMERIC.has(each.format))).slice(0, 4);
  if (!readable.length) return null;
  return h("section", {className: "history card", "aria-labelledby": "history-title", dataset: {testid: "history"}},
    h("h2", {id: "history-title"}, "History, last 24 h"),
    readable.map((characteristic) => historyChart(ctx, characteristic)));
}

function historyChart(ctx, characteristic) {
  const title = humanize(characteristic.type);
  const slot = h("div", {className: "chart-slot"}, h("p", {className: "muted"}, "loading…"));
  const figure = h("figure", {className: "chart-figure", dataset: {testid: "history-figure", topic: characteristic.topic}},
    h("figcaption", {}, title), slot);
  const unit = UNITS[characteristic.unit] ?? "";
  const describe = (value) => {
    if (value === null || value === undefined) return "no value";
    if (characteristic.format === "bool") return value ? "On" : "Off";
    const label = (characteristicMeta(ctx, characteristic.topic)?.validValues ?? []).find((entry) => entry.value === value)?.label;
    if (label) return humanize(label);
    return `${formatValue(typeof value === "number" ? Math.round(value * 10) / 10 : value)}${unit && unit !== "%" && unit !== "°" ? " " + unit : unit}`;
  };
  let fetched = null;
  const draw = () => {
    if (!fetched) return;
    const now = Date.now();
    const live = parseValue(ctx.store.get(characteristic.topic));
    const points = live === undefined ? fetched.points : withLiveValue(fetched.points, now, live);
    if (!points.length) return slot.replaceChildren(h("p", {className: "muted"}, "No changes in the last 24 h."));
    const from = chartStart(points, now - 24 * 3_600_000, now);
    slot.replaceChildren(chartSvg(points, {from, to: now, enumerated: Array.isArray(characteristic.validValues), describe,
      title: `${title}, last 24 h: ${points.length} value${points.length === 1 ? "" : "s"}, now ${describe(points.at(-1)[1])}`}));
    if (fetched.truncated) slot.append(h("p", {className: "muted"}, "Only the latest values are drawn (the gateway sent a part)."));
  };
  fetchHistory(ctx.commands, characteristic.topic, {maxAgeMs: ctx.fresh ? 0 : 60_000}).then((answer) => {
    if (answer.error) {
      const words = {"history-off": "History is off on this gateway (history: in its configuration).",
        "no-answer": "The gateway keeps no history (it did not answer).", "unknown-request": "This gateway keeps no history (it is older)."}[answer.error];
      slot.replaceChildren(h("p", {className: "muted", dataset: {testid: "history-unavailable"}}, words ?? `No history: ${answer.message || answer.error}`));
      return;
    }
    fetched = answer;
    figure.dataset.fetched = JSON.stringify(answer.points); // what the gateway answered, for the browser test
    draw();
  });
  ctx.watch(characteristic.topic, draw);
  return figure;
}

// "Last seen 3 minutes ago" grows older by itself: every card's words again each half minute.
setInterval(() => {
  for (const line of document.querySelectorAll("[data-testid=last-seen]")) {
    if (line.dataset.iso) line.textContent = lastSeenWords(line.dataset.iso) ?? line.textContent;
  }
}, 30_000);

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
  ctx.watch(attributeTopic(accessory.topic, "reachable"), showReachability);
  showReachability(ctx.store.get(attributeTopic(accessory.topic, "reachable")));
  const lastSeen = h("p", {className: "muted last-seen", dataset: {testid: "last-seen"}});
  const showLastSeen = (payload) => {
    lastSeen.dataset.iso = payload ?? "";
    lastSeen.title = payload ? new Date(payload).toLocaleString() : "";
    lastSeen.textContent = lastSeenWords(payload) ?? "Not heard from yet";
  };
  ctx.watch(attributeTopic(accessory.topic, "lastSeen"), showLastSeen);
  showLastSeen(ctx.store.get(attributeTopic(accessory.topic, "lastSeen")));
  const identifyStatus = statusLine("identify-status", `identify:${accessory.id}`);
  append(article,
    h("header", {className: "accessory-head"},
      categoryIcon(accessory.category),
      h("div", {},
        h("h2", {id: `acc-${cssId(accessory.id)}`, className: "accessory-title", dataset: {testid: "accessory-name"}}, accessory.name),
        h("p", {className: "muted"}, h("span", {dataset: {testid: "category"}}, humanize(accessory.category || "other")),
          accessory.model ? ` · ${accessory.manufacturer ? accessory.manufacturer + " " : ""}${accessory.model}` : ""),
        lastSeen),
      reachable),
    bridgeLine(accessory, byId),
    isCamera(accessory) ? snapshotFigure(ctx, home, accessory) : null,
    accessory.services.map((service) => renderService(ctx, service)),
    optionsSection(ctx, accessory),
    controllersSection(ctx, home, accessory),
    h("div", {className: "accessory-foot"},
      h("button", {type: "button", className: "secondary", dataset: {testid: "identify"},
        onclick: () => identify(ctx, home, accessory, identifyStatus)}, "Identify"),
      identifyStatus,
      mqttDetails(`${accessory.topic}`, mosquittoPub(requestTopic(ctx.session.base, "accessory", "identify"), JSON.stringify({accessory: accessory.id})),
        "MQTT: the accessory, identify")));
  return article;
}

/** What the accessory's options hold back or change (`$layout`'s `options`), in words; they are
 *  set in the configuration or with `$request/accessory/options`. */
function optionsSection(ctx, accessory) {
  const lines = optionWords(accessory.options);
  if (!lines.length) return null;
  return h("section", {className: "options", dataset: {testid: "options"}, "aria-label": "Options"},
    h("h3", {}, "Options"),
    h("ul", {}, lines.map((line) => h("li", {}, line))),
    h("p", {className: "muted"}, "What the options hold back still reaches this page and the history."),
    mqttDetails(accessory.topic, mosquittoPub(requestTopic(ctx.session.base, "accessory", "options"),
      JSON.stringify({accessory: accessory.id, options: accessory.options})), "MQTT: the options"));
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
  ctx.watch(attributeTopic(accessory.topic, "snapshot"), show);
  show(ctx.store.get(attributeTopic(accessory.topic, "snapshot")));
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

/** The controllers a paired HomeKit device knows ($request/accessory/pairings), each with its
 *  role, and a remove button for each but this gateway's own pairing (a controller that is gone,
 *  a second Home Assistant). Admins only, on the device's own accessory (a bridge, not what is
 *  behind it). */
function controllersSection(ctx, home, accessory) {
  if (!ctx.admin || !accessory.id.startsWith("hap-") || accessory.bridge) return null;
  const list = h("ul", {className: "controllers", dataset: {testid: "controllers"}});
  const status = statusLine("controllers-status", `controllers:${accessory.id}`);
  const show = (controllers) => list.replaceChildren(...controllers.map((controller) =>
    h("li", {dataset: {testid: "controller", controller: controller.id}},
      h("code", {}, controller.id), ` · ${controller.admin ? "admin" : "user"} `,
      controller.thisGateway ? h("span", {className: "badge", dataset: {testid: "this-gateway"}}, "this gateway")
        : removeButton(`the pairing of ${controller.id}`, "remove-controller", () => ask(controller.id)))));
  const ask = async (remove) => {
    setStatus(status, "pending", remove ? `removing ${remove} from the device…` : "asking the device…");
    try {
      const answer = await ctx.commands.request("accessory", "pairings", {home: home.name, accessory: accessory.id, ...(remove ? {remove} : {})}, 20000);
      if (!answer.ok) {
        setStatus(status, "error", errorText(answer));
        return;
      }
      const controllers = answer.data?.controllers ?? [];
      show(controllers);
      const count = `${controllers.length} controller${controllers.length === 1 ? "" : "s"}`;
      setStatus(status, "ok", remove ? `removed ${remove}; the device now knows ${count}` : `the device knows ${count}`);
    } catch (error) {
      setStatus(status, "error", httpText(error));
    }
  };
  return h("section", {className: "controllers-section", dataset: {testid: "controllers-section"}},
    h("h3", {}, "Controllers"),
    h("p", {className: "muted"}, "Every controller this device is paired with: HomeGate, Apple Home, Home Assistant. "
      + "Remove one that is gone; HomeGate's own pairing is removed with Unpair."),
    h("button", {type: "button", className: "secondary", dataset: {testid: "list-controllers"}, onclick: () => ask()}, "List controllers"),
    list, status,
    mqttDetails(`${accessory.topic}`, mosquittoPub(requestTopic(ctx.session.base, "accessory", "pairings"), JSON.stringify({accessory: accessory.id})),
      "MQTT: the device's controllers"));
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
    fittedControls(ctx, service),
    adaptiveLightingRow(ctx, service),
    h("div", {className: "chars"}, service.characteristics.map((characteristic) => renderCharacteristic(ctx, characteristic))),
    mqttDetails(service.topic, mosquittoPub(commandTopic(service.topic, "set"), JSON.stringify(sampleObject(ctx, service))), "MQTT: the whole service"));
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
/** Adaptive Lighting's switch, for a lightbulb that can follow it (docs/mqtt-api.md "Adaptive
 *  Lighting"): its state is `<service>/adaptive-lighting` (`on`, `off`), its set acknowledged once
 *  the bulb took the day's curve. */
function adaptiveLightingRow(ctx, service) {
  const types = new Set(service.characteristics.map((each) => each.type));
  const needed = ["transition-control", "supported-transition-configuration", "color-temperature", "brightness"];
  if (service.type !== "lightbulb" || !needed.every((type) => types.has(type))) return null;
  const topic = attributeTopic(service.topic, "adaptiveLighting");
  const row = {
    ctx, topic, pending: 0, sync: () => {},
    status: statusLine("write-status", `write:${topic}`),
    controlSlot: h("div", {className: "control"}),
  };
  const nameId = `name-${cssId(topic)}`;
  const input = h("input", {type: "checkbox", role: "switch", id: `ctl-${cssId(topic)}`, "aria-labelledby": nameId, dataset: {testid: "adaptive-lighting"}});
  const words = h("span", {className: "switch-words", "aria-hidden": "true"});
  row.sync = () => {
    input.checked = ctx.store.get(topic) === "on";
    words.textContent = input.checked ? "on" : "off";
  };
  input.addEventListener("change", () => { words.textContent = input.checked ? "on" : "off"; write(row, input.checked ? "on" : "off"); });
  row.controlSlot.append(h("label", {className: "switch"}, input, h("span", {className: "track", "aria-hidden": "true"}), words));
  ctx.watch(topic, () => { if (row.pending === 0) row.sync(); });
  row.sync();
  return h("div", {className: "char adaptive-lighting", dataset: {testid: "adaptive-lighting-row", topic}},
    h("span", {className: "char-name", id: nameId}, "Adaptive Lighting"),
    row.controlSlot,
    row.status,
    mqttDetails(topic, mosquittoPub(commandTopic(topic, "set"), "on"), "MQTT: Adaptive Lighting"));
}

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
  row.element = element;
  buildControl(row);
  showValue(row);
  ctx.watch(topic, () => showValue(row));
  ctx.watch(`${topic}/label`, () => showValue(row));
  ctx.watch(attributeTopic(accessoryTopicOf(topic), "meta"), () => { buildControl(row); showValue(row); });
  return element;
}

/** `<accessory>` of `<accessory>/<service>/<characteristic>`. */
function accessoryTopicOf(characteristicTopic) {
  return characteristicTopic.split("/").slice(0, -2).join("/");
}

/** A characteristic's metadata, as its accessory's `$meta` describes it under `services`. */
function characteristicMeta(ctx, characteristicTopic) {
  const [service, characteristic] = characteristicTopic.split("/").slice(-2);
  return ctx.store.json(attributeTopic(accessoryTopicOf(characteristicTopic), "meta"))?.services?.[service]?.characteristics?.[characteristic];
}

/** Valid values with their labels: $meta has {value, label}; the layout has the bare values. */
function choices(row) {
  const meta = characteristicMeta(row.ctx, row.topic);
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
    ? mosquittoPub(commandTopic(row.topic, "set"), payload ?? sampleFor(row))
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
  // A switch, a list or a slider shows the value in its own words: the raw value beside it is
  // shown only with "Show MQTT" on (app.css), so a row never reads "On true" next to "on".
  const saysValue = format === "bool" || Boolean(valid && valid.length) || (NUMERIC.has(format) && Number.isFinite(minValue) && Number.isFinite(maxValue));
  row.element?.classList.toggle("control-says-value", saysValue);
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
