// The gateway's HTTP API (same origin) and the bookkeeping of what the page sent: writes and
// reads correlated by their "id" with <topic>/set/result and <topic>/get/result, requests by their
// "transaction" with <base>/$response/<object>/<verb> (docs/mqtt-api.md sections 3, 4 and 7).
import {commandTopic, requestTopic, responsePrefix, isAcknowledgement} from "./topics.js";

export class HttpError extends Error {
  constructor(status, body) {
    super(body?.message || body?.error || `HTTP ${status}`);
    this.status = status;
    this.code = body?.error;
  }
}

async function call(method, path, body, csrf) {
  const headers = {"Accept": "application/json"};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (csrf) headers["X-CSRF-Token"] = csrf;
  const response = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin", cache: "no-store"});
  let answer = null;
  try { answer = await response.json(); } catch { answer = null; }
  if (!response.ok) throw new HttpError(response.status, answer);
  return answer;
}

export const api = {
  session: () => call("GET", "/api/session"),
  login: (user, password) => call("POST", "/api/login", {user, password}),
  logout: (csrf) => call("POST", "/api/logout", {}, csrf),
  publish: (csrf, topic, payload) => call("POST", "/api/publish", {topic, payload}, csrf),
};

let counter = 0;
/** A correlation id no other client uses: "ui-" + random + a counter. */
export function uniqueId() {
  counter += 1;
  const random = crypto.getRandomValues(new Uint32Array(1))[0].toString(36);
  return `ui-${random}-${counter}`;
}

/** HAP error in words: "invalid-value: brightness must be within 0...100, got 150". */
export function errorText(answer) {
  const parts = [answer.error || (answer.status !== undefined ? `status ${answer.status}` : "failed"), answer.message].filter(Boolean);
  return parts.join(": ");
}

export class Commands {
  constructor(session, onLog) {
    this.session = session;   // {csrf, base, role, ...}; replaced on every login
    this.onLog = onLog;       // (kind, topic, text) for the log panel
    this.pending = new Map(); // id or transaction -> {resolve, timer}
  }

  /** Publishes through the server; rejects with HttpError (403 forbidden, 503 broker-unavailable...). */
  publish(topic, payload) {
    return api.publish(this.session.csrf, topic, payload);
  }

  /** Publishes {"value": v, "id"} to <topic>/set and resolves with the acknowledgement
   *  ({ok, ms, value} or {ok: false, error, message}); `onSent` runs once the server took it. */
  write(topic, value, onSent) {
    return this.command(commandTopic(topic, "set"), {value}, onSent);
  }

  /** Publishes {"id"} to <topic>/get: the device is read now; resolves with the acknowledgement. */
  read(topic, onSent) {
    return this.command(commandTopic(topic, "get"), {}, onSent);
  }

  /** Runs an action set through its shortcut topic (guests may): one aggregated acknowledgement. */
  execute(topic, onSent) {
    return this.command(topic, {}, onSent);
  }

  async command(topic, body, onSent) {
    const id = uniqueId();
    const answer = this.expect(id, 30000);
    try {
      await this.publish(topic, JSON.stringify({...body, id}));
    } catch (error) {
      this.forget(id);
      throw error;
    }
    onSent?.();
    return answer;
  }

  /** `<base>/$request/<object>/<verb>` with a transaction; resolves with the answer
   *  ({ok: true, data} or {ok: false, error, message}). */
  async request(object, verb, body = {}, timeoutMs = 90000) {
    const transaction = uniqueId();
    const answer = this.expect(transaction, timeoutMs);
    try {
      await this.publish(requestTopic(this.session.base, object, verb), JSON.stringify({...body, transaction}));
    } catch (error) {
      this.forget(transaction);
      throw error;
    }
    return answer;
  }

  expect(key, timeoutMs) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(key);
        resolve({ok: false, error: "no-answer", message: `no answer within ${Math.round(timeoutMs / 1000)} s`});
      }, timeoutMs);
      this.pending.set(key, {resolve, timer});
    });
  }

  forget(key) {
    const entry = this.pending.get(key);
    if (entry) clearTimeout(entry.timer);
    this.pending.delete(key);
  }

  /** Every transient message comes through here: answers to what this page sent settle their promise. */
  received(topic, payload) {
    let answer;
    try { answer = JSON.parse(payload); } catch { return; }
    if (!answer || typeof answer !== "object") return;
    const isAnswer = topic.startsWith(responsePrefix(this.session.base));
    const key = isAnswer ? answer.transaction : answer.id;
    if (typeof key !== "string" || !this.pending.has(key)) return;
    if (!isAcknowledgement(topic) && !isAnswer) return;
    const {resolve, timer} = this.pending.get(key);
    clearTimeout(timer);
    this.pending.delete(key);
    resolve(answer);
  }
}
