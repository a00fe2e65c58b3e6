// Controls that fit a service, above its characteristics in the accessory's detail: a colour
// wheel (hue and saturation written together, in ONE service-level set on `<service>/set`,
// docs/mqtt-api.md section 3), a thermostat (target up and down, the mode in words), lock and
// garage door buttons with their state, a fan's speed steps. Each write shows pending, then the
// acknowledgement (or the device's error in words) in the service's status line.

import {h, statusLine, setStatus} from "./dom.js";
import {errorText} from "./api.js";
import {characteristicOf, THERMOSTAT_MODES} from "./tiles.js";
import {commandTopic} from "./topics.js";

// The wheel's geometry (pure; checked by Tests/WebUI/tiles_test.mjs) ------------------------------

/** Hue (degrees clockwise from the top, as the wheel's conic gradient draws it) and saturation
 *  (percent, 0 at the centre, 100 on the rim) of the point (dx, dy) from the centre of a wheel of
 *  radius `radius`; whole numbers. */
export function wheelValue(dx, dy, radius) {
  const hue = Math.round((Math.atan2(dx, -dy) * 180 / Math.PI + 360) % 360);
  const saturation = Math.round(Math.min(1, Math.hypot(dx, dy) / radius) * 100);
  return {hue, saturation};
}

/** Where (dx, dy from the centre) the wheel shows a hue and saturation. */
export function wheelPoint(hue, saturation, radius) {
  const angle = (hue * Math.PI) / 180;
  const distance = (Math.max(0, Math.min(100, saturation)) / 100) * radius;
  return {dx: Math.sin(angle) * distance, dy: -Math.cos(angle) * distance};
}

// The DOM -----------------------------------------------------------------------------------------

/** The fitting controls of a service, or null when it has none. ctx: the view's context. */
export function fittedControls(ctx, service) {
  const writable = (type) => characteristicOf(service, type)?.perms?.includes("pw");
  const parts = [];
  if (writable("hue") && writable("saturation")) parts.push(colourWheel(ctx, service));
  if (service.type === "thermostat" && writable("target-temperature")) parts.push(thermostat(ctx, service));
  if (service.type === "lock-mechanism" && writable("lock-target-state")) parts.push(choiceButtons(ctx, service, "lock-current-state", "lock-target-state",
    [{value: 1, words: "Lock"}, {value: 0, words: "Unlock"}], {0: "Unlocked", 1: "Locked", 2: "Jammed", 3: "Unknown"}));
  if (service.type === "garage-door-opener" && writable("target-door-state")) parts.push(choiceButtons(ctx, service, "current-door-state", "target-door-state",
    [{value: 0, words: "Open"}, {value: 1, words: "Close"}], {0: "Open", 1: "Closed", 2: "Opening", 3: "Closing", 4: "Stopped"}));
  if (writable("rotation-speed")) parts.push(fanSpeed(ctx, service));
  if (!parts.length) return null;
  const status = statusLine("control-status", `control:${service.topic}`);
  const panel = h("div", {className: "fitted", dataset: {testid: "fitted-controls"}}, parts, status);
  panel.status = status;
  for (const part of parts) part.status = status;
  return panel;
}

function value(ctx, service, type) {
  const characteristic = characteristicOf(service, type);
  if (!characteristic) return undefined;
  const text = ctx.store.get(characteristic.topic);
  if (text === undefined) return undefined;
  try { return JSON.parse(text); } catch { return text; }
}

function watchAll(ctx, service, types, listener) {
  for (const type of types) {
    const characteristic = characteristicOf(service, type);
    if (characteristic) ctx.watch(characteristic.topic, listener);
  }
}

/** Sends a service-level set (several characteristics in one message) or a characteristic's set,
 *  with pending -> acknowledged in the panel's status line. */
async function send(ctx, statusOf, topic, body, words) {
  const status = statusOf();
  setStatus(status, "pending", `pending: sending ${words}`);
  const started = performance.now();
  try {
    const answer = await ctx.commands.command(commandTopic(topic, "set"), body, () => setStatus(status, "pending", `pending: ${words} sent, waiting for the device`));
    // A service-level set's acknowledgement has no "ms" (one result per characteristic): the
    // page's own round trip then.
    const ms = answer.ms ?? Math.round((performance.now() - started) * 10) / 10;
    const failed = (answer.results ?? []).find((result) => !result.ok);
    if (answer.ok) setStatus(status, "ok", `acknowledged in ${ms} ms: ${words}`);
    else if (failed) setStatus(status, "error", `${failed.topic.split("/").pop()}: ${failed.message ?? "status " + failed.status}`);
    else setStatus(status, "error", errorText(answer));
  } catch (error) {
    setStatus(status, "error", error.code ? `${error.code}: ${error.message}` : String(error.message ?? error));
  }
}

function colourWheel(ctx, service) {
  const marker = h("span", {className: "wheel-marker", "aria-hidden": "true"});
  const swatch = h("span", {className: "swatch", "aria-hidden": "true"});
  const words = h("output", {className: "wheel-words", dataset: {testid: "colour-words"}});
  const wheel = h("div", {className: "wheel", tabindex: "0", role: "slider", "aria-label": "Colour: arrow keys left and right change the hue, up and down the saturation",
    "aria-valuemin": "0", "aria-valuemax": "360", dataset: {testid: "colour-wheel"}}, marker);
  let shown = {hue: 0, saturation: 0};
  let pending = null;
  const container = h("div", {className: "colour"}, wheel, h("div", {className: "colour-side"}, swatch, words));
  const draw = ({hue, saturation}) => {
    shown = {hue, saturation};
    const radius = wheel.clientWidth / 2 || 80;
    const {dx, dy} = wheelPoint(hue, saturation, radius);
    marker.style.left = `calc(50% + ${dx}px)`;
    marker.style.top = `calc(50% + ${dy}px)`;
    swatch.style.background = `hsl(${hue} ${saturation}% 50%)`;
    words.textContent = `Hue ${hue}°, saturation ${saturation}%`;
    wheel.setAttribute("aria-valuenow", String(hue));
    wheel.setAttribute("aria-valuetext", `hue ${hue} degrees, saturation ${saturation} percent`);
  };
  const sync = () => {
    if (pending) return;
    draw({hue: Math.round(value(ctx, service, "hue") ?? 0), saturation: Math.round(value(ctx, service, "saturation") ?? 0)});
  };
  const write = async (chosen) => {
    pending = chosen;
    draw(chosen);
    await send(ctx, () => container.status, service.topic, {hue: chosen.hue, saturation: chosen.saturation}, `hue ${chosen.hue}°, saturation ${chosen.saturation}%`);
    pending = null;
    sync();
  };
  // One write per gesture: where the pointer is let go.
  wheel.addEventListener("pointerdown", (event) => {
    wheel.setPointerCapture?.(event.pointerId);
    wheel.dataset.dragging = "1";
    draw(pointValue(wheel, event));
  });
  wheel.addEventListener("pointermove", (event) => { if (wheel.dataset.dragging) draw(pointValue(wheel, event)); });
  wheel.addEventListener("pointerup", (event) => {
    delete wheel.dataset.dragging;
    write(pointValue(wheel, event));
  });
  wheel.addEventListener("pointercancel", () => { delete wheel.dataset.dragging; sync(); });
  // The keyboard: a step per key, written once the keys rest for 600 ms.
  let keyTimer = null;
  wheel.addEventListener("keydown", (event) => {
    const steps = {ArrowLeft: [-10, 0], ArrowRight: [10, 0], ArrowUp: [0, 10], ArrowDown: [0, -10]}[event.key];
    if (!steps) return;
    event.preventDefault();
    const next = {hue: (shown.hue + steps[0] + 360) % 360, saturation: Math.max(0, Math.min(100, shown.saturation + steps[1]))};
    draw(next);
    clearTimeout(keyTimer);
    keyTimer = setTimeout(() => write(next), 600);
  });
  watchAll(ctx, service, ["hue", "saturation"], sync);
  requestAnimationFrame(sync);
  sync();
  return container;
}

function pointValue(wheel, event) {
  const rect = wheel.getBoundingClientRect();
  return wheelValue(event.clientX - (rect.left + rect.width / 2), event.clientY - (rect.top + rect.height / 2), rect.width / 2);
}

function thermostat(ctx, service) {
  const target = characteristicOf(service, "target-temperature");
  const step = target.minStep && target.minStep >= 0.1 ? Math.max(0.5, target.minStep) : 0.5;
  const current = h("output", {className: "big", dataset: {testid: "thermostat-current"}});
  const targetWords = h("output", {className: "big", dataset: {testid: "thermostat-target"}});
  const change = (delta) => {
    const now = value(ctx, service, "target-temperature");
    if (typeof now !== "number") return;
    const next = Math.round(Math.min(target.maxValue ?? 38, Math.max(target.minValue ?? 10, now + delta)) * 10) / 10;
    send(ctx, () => box.status, target.topic, {value: next}, `target ${next} °C`);
  };
  const modeCharacteristic = characteristicOf(service, "target-heating-cooling-state");
  const modes = modeCharacteristic?.perms?.includes("pw")
    ? h("div", {className: "segments", role: "group", "aria-label": "Mode"},
      (modeCharacteristic.validValues ?? [0, 1, 2, 3]).map((mode) => h("button", {type: "button", className: "secondary small", dataset: {testid: "thermostat-mode", mode: String(mode)},
        onclick: () => send(ctx, () => box.status, modeCharacteristic.topic, {value: mode}, `mode ${THERMOSTAT_MODES[mode] ?? mode}`)}, THERMOSTAT_MODES[mode] ?? String(mode))))
    : null;
  const box = h("div", {className: "thermostat", dataset: {testid: "thermostat"}},
    h("div", {}, h("span", {className: "muted"}, "Now "), current),
    h("div", {className: "target"}, h("span", {className: "muted"}, "Target "),
      h("button", {type: "button", className: "secondary round", "aria-label": `Lower the target by ${step} °C`, dataset: {testid: "thermostat-down"}, onclick: () => change(-step)}, "−"),
      targetWords,
      h("button", {type: "button", className: "secondary round", "aria-label": `Raise the target by ${step} °C`, dataset: {testid: "thermostat-up"}, onclick: () => change(step)}, "+")),
    modes);
  const sync = () => {
    const now = value(ctx, service, "current-temperature");
    const wanted = value(ctx, service, "target-temperature");
    current.textContent = typeof now === "number" ? `${now} °C` : "—";
    targetWords.textContent = typeof wanted === "number" ? `${wanted} °C` : "—";
    const mode = value(ctx, service, "target-heating-cooling-state");
    for (const button of box.querySelectorAll("[data-testid=thermostat-mode]")) button.setAttribute("aria-pressed", String(Number(button.dataset.mode) === mode));
  };
  watchAll(ctx, service, ["current-temperature", "target-temperature", "target-heating-cooling-state"], sync);
  sync();
  return box;
}

function choiceButtons(ctx, service, currentType, targetType, choices, words) {
  const target = characteristicOf(service, targetType);
  const state = h("output", {className: "big", dataset: {testid: "state-words"}});
  const box = h("div", {className: "choice"}, state,
    h("div", {className: "segments", role: "group", "aria-label": "Actions"},
      choices.map((choice) => h("button", {type: "button", dataset: {testid: "choice", value: String(choice.value)},
        onclick: () => send(ctx, () => box.status, target.topic, {value: choice.value}, choice.words.toLowerCase())}, choice.words))));
  const sync = () => {
    const current = value(ctx, service, currentType);
    state.textContent = current === undefined ? "No value yet" : words[current] ?? `State ${current}`;
    const wanted = value(ctx, service, targetType);
    for (const button of box.querySelectorAll("[data-testid=choice]")) button.setAttribute("aria-pressed", String(Number(button.dataset.value) === wanted));
  };
  watchAll(ctx, service, [currentType, targetType], sync);
  sync();
  return box;
}

function fanSpeed(ctx, service) {
  const speed = characteristicOf(service, "rotation-speed");
  const max = speed.maxValue ?? 100;
  const steps = [{words: "Low", value: Math.round(max / 3)}, {words: "Medium", value: Math.round((2 * max) / 3)}, {words: "High", value: max}];
  const box = h("div", {className: "segments", role: "group", "aria-label": "Speed", dataset: {testid: "fan-speed"}},
    steps.map((step) => h("button", {type: "button", className: "secondary small", dataset: {value: String(step.value)},
      onclick: () => send(ctx, () => box.status, speed.topic, {value: step.value}, `speed ${step.words.toLowerCase()} (${step.value}%)`)}, step.words)));
  const sync = () => {
    const now = value(ctx, service, "rotation-speed");
    for (const button of box.querySelectorAll("button")) button.setAttribute("aria-pressed", String(Number(button.dataset.value) === now));
  };
  watchAll(ctx, service, ["rotation-speed"], sync);
  sync();
  return box;
}
