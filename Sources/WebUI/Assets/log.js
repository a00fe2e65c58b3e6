// The live log: $events, acknowledgements (.../result) and request answers ($response/...), newest
// first, at most LIMIT entries. Commands and requests themselves are not logged: a pairing request
// carries a setup code, which must not be shown anywhere.

import {h, copyButton} from "./dom.js";
import {eventsTopic, responsePrefix, isAcknowledgement} from "./topics.js";

const LIMIT = 300;

export class Log {
  constructor(base) {
    this.base = base;
    this.entries = [];
    this.list = null; // the <ol> while the log view is shown
  }

  /** Keeps a transient message when it is one the log shows; returns whether it did. */
  add(topic, payload) {
    const kind = this.kindOf(topic);
    if (!kind) return false;
    const entry = {time: new Date(), kind, topic, payload, summary: summary(kind, topic, payload, this.base)};
    this.entries.unshift(entry);
    if (this.entries.length > LIMIT) this.entries.length = LIMIT;
    if (this.list?.isConnected) {
      this.list.prepend(item(entry));
      while (this.list.children.length > LIMIT) this.list.lastElementChild.remove();
    }
    return true;
  }

  kindOf(topic) {
    if (topic === eventsTopic(this.base)) return "event";
    if (topic.startsWith(responsePrefix(this.base))) return "response";
    if (isAcknowledgement(topic)) return "ack";
    return null;
  }

  render() {
    this.list = h("ol", {className: "log", reversed: true, dataset: {testid: "log"}}, this.entries.map(item));
    return h("section", {className: "log-view", "aria-labelledby": "log-title"},
      h("h1", {id: "log-title"}, "Live log"),
      h("p", {className: "muted"}, `Events ($events), acknowledgements (…/result) and answers ($response/…) as they arrive, newest first (the last ${LIMIT}).`),
      h("div", {className: "buttons"}, h("button", {type: "button", className: "secondary", onclick: () => {
        this.entries = [];
        this.list.replaceChildren();
      }}, "Clear")),
      this.list);
  }
}

const KIND_WORDS = {event: "event", ack: "ack", response: "answer"};

function item(entry) {
  return h("li", {className: `log-entry ${entry.kind}`, dataset: {testid: "log-entry", kind: entry.kind}},
    h("div", {className: "log-head"},
      h("time", {dateTime: entry.time.toISOString()}, entry.time.toLocaleTimeString()),
      h("span", {className: "badge"}, KIND_WORDS[entry.kind]),
      h("span", {className: "log-summary"}, entry.summary)),
    h("div", {className: "code-line"}, h("code", {}, entry.topic), copyButton(entry.topic, "topic")),
    h("code", {className: "payload"}, entry.payload));
}

/** One line in words: "room-renamed: Garage -> Car Port", "ok in 0.6 ms", "invalid-value: ...". */
function summary(kind, topic, payload, base) {
  let body;
  try { body = JSON.parse(payload); } catch { return payload; }
  if (!body || typeof body !== "object") return payload;
  if (kind === "event") {
    const {event, ...rest} = body;
    const details = Object.entries(rest).map(([key, value]) => `${key} ${typeof value === "object" ? JSON.stringify(value) : value}`).join(", ");
    return `${event}: ${details}`;
  }
  const what = kind === "response" ? topic.slice(responsePrefix(base).length) : topic.split("/").slice(-3, -1).join("/");
  if (body.ok) return `✓ ${what} ok${body.ms !== undefined ? ` in ${body.ms} ms` : ""}${body.value !== undefined ? `: ${JSON.stringify(body.value)}` : ""}`;
  return `✕ ${what} failed: ${[body.error, body.message].filter(Boolean).join(": ")}`;
}
