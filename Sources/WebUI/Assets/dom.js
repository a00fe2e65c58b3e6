// Small DOM helpers shared by the views: an element builder, copy buttons, shell quoting and the
// "MQTT" disclosure every object shown carries (its topic and the mosquitto_pub line for it).

/** h("button", {type: "button", onclick}, "text", child...): an element with attributes and children.
 *  Attributes starting with "on" are event listeners; `dataset` takes an object; false/null skip. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === false || value === null || value === undefined) continue;
    if (key.startsWith("on") && typeof value === "function") element.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(element.dataset, value);
    else if (key === "className") element.className = value;
    else if (key in element && typeof value !== "string") element[key] = value;
    else element.setAttribute(key, value === true ? "" : value);
  }
  append(element, children);
  return element;
}

export function append(element, ...children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
}

/** Single-quotes a word for a POSIX shell when it needs quoting. */
export function shellQuote(word) {
  const text = String(word);
  if (/^[A-Za-z0-9_.,:+=@%\/-]+$/.test(text)) return text;
  return "'" + text.replaceAll("'", "'\\''") + "'";
}

/** The mosquitto_pub line that publishes `payload` to `topic` (the topic always quoted: `$` levels). */
export function mosquittoPub(topic, payload) {
  return `mosquitto_pub -t '${topic.replaceAll("'", "'\\''")}' -m ${shellQuote(payload)}`;
}

/** A button that copies `text()` to the clipboard and says so in words. */
export function copyButton(text, what = "topic") {
  const button = h("button", {type: "button", className: "copy", "aria-label": `Copy ${what}`, title: `Copy ${what}`}, "Copy");
  button.addEventListener("click", async () => {
    const value = typeof text === "function" ? text() : text;
    let done = false;
    try {
      await navigator.clipboard.writeText(value);
      done = true;
    } catch {
      done = copyFallback(value);
    }
    button.textContent = done ? "Copied ✓" : "Copy failed";
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  });
  return button;
}

// Pages served over plain http on a LAN address are not a secure context: no navigator.clipboard.
function copyFallback(value) {
  const area = h("textarea", {className: "offscreen", readonly: true});
  area.value = value;
  document.body.append(area);
  area.select();
  let done = false;
  try { done = document.execCommand("copy"); } catch { done = false; }
  area.remove();
  return done;
}

/** A <code> line with its copy button. */
export function codeLine(text, what, testid) {
  return h("div", {className: "code-line"}, h("code", {dataset: testid ? {testid} : {}}, text), copyButton(text, what));
}

/** The "MQTT" disclosure: the object's topic and, when given, the command line for it. */
export function mqttDetails(topic, commandLine, label = "MQTT") {
  return h("details", {className: "mqtt", dataset: {key: `${label} ${topic}`}},
    h("summary", {}, label),
    codeLine(topic, "topic", "topic"),
    commandLine ? codeLine(commandLine, "command", "command") : null);
}

// Status lines outlive a re-render of their view (a layout change re-renders it while an answer is
// awaited): each has a key; its last state is remembered and shown by the newest line of that key.
const statusMemory = new Map(); // key -> {kind, text}
const liveStatus = new Map();   // key -> the element currently showing it

/** Forgets every status line's state (another user signs in). */
export function forgetStatuses() {
  statusMemory.clear();
  liveStatus.clear();
}

/** A status line (role=status, polite) remembered under `key`. */
export function statusLine(testid, key) {
  const element = h("p", {className: "status-line", role: "status", dataset: testid ? {testid} : {}});
  if (key) {
    element.dataset.key = key;
    liveStatus.set(key, element);
    const saved = statusMemory.get(key);
    if (saved) paint(element, saved.kind, saved.text);
  }
  return element;
}

/** Sets a status line: kind "pending" | "ok" | "error" | "info" (a word and a symbol, not colour alone). */
export function setStatus(element, kind, text) {
  if (!element) return;
  const key = element.dataset.key;
  if (key) {
    statusMemory.set(key, {kind, text});
    element = liveStatus.get(key) ?? element;
  }
  paint(element, kind, text);
}

/** Sets the status line remembered under `key`, whether or not one is on the page now. */
export function setStatusOf(key, kind, text) {
  statusMemory.set(key, {kind, text});
  const element = liveStatus.get(key);
  if (element) paint(element, kind, text);
}

function paint(element, kind, text) {
  const symbols = {pending: "… ", ok: "✓ ", error: "✕ ", info: ""};
  element.dataset.kind = kind;
  element.textContent = (symbols[kind] ?? "") + text;
}

/** "lock-target-state" -> "Lock target state". */
export function humanize(slug) {
  const text = String(slug ?? "").replaceAll("-", " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A value as a person reads it (JSON for objects). */
export function formatValue(value) {
  if (value === undefined) return "—";
  if (value === null) return "null";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** A remove button in two steps: the first press asks, the second (within 8 s) does it. */
export function removeButton(what, testid, onConfirm) {
  const button = h("button", {type: "button", className: "danger small", dataset: {testid}, "aria-label": `Remove ${what}`}, "Remove…");
  let timer = null;
  button.addEventListener("click", () => {
    if (!timer) {
      button.textContent = `Press again to remove ${what}`;
      timer = setTimeout(() => { timer = null; button.textContent = "Remove…"; }, 8000);
      return;
    }
    clearTimeout(timer);
    timer = null;
    button.textContent = "Remove…";
    onConfirm();
  });
  return button;
}
