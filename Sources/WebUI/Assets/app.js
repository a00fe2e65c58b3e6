// HomeGate's page: the session (login when the gateway asks for one), the WebSocket that feeds
// the store with every message under the base topic, and the views (home, pairing, manage, log)
// chosen by the URL's hash. Everything the page changes goes through POST /api/publish.

import {api, Commands, HttpError} from "./api.js";
import {Store, isTransient} from "./store.js";
import {Log} from "./log.js";
import {h, forgetStatuses} from "./dom.js";
import {renderHome} from "./home.js";
import {renderPairing} from "./pairing.js";
import {renderManage} from "./manage.js";
import {backupSection, showRestoreBanner, RESTORING} from "./backup.js";
import {forgetHistory} from "./history.js";
import {stateTopic, useGrammar} from "./topics.js";

const $ = (id) => document.getElementById(id);

const state = {
  session: null,         // the answer of /api/session or /api/login
  store: new Store(),
  commands: null,
  log: null,
  socket: null,
  synced: false,
  retry: 0,              // reconnection attempts since the last good connection
  retryTimer: null,
  homeId: localStorage.getItem("homegate.home"),
  browser: {browsing: undefined},
  cleanups: [],          // watches of the view on screen, ended when it is rendered again
  lastDetail: null,      // the accessory whose detail was shown last: its tile takes the focus back
};

const MQTT_KEY = "homegate.mqtt";

const isAdmin = () => state.session?.role === "admin";

// Session -------------------------------------------------------------------------------------------

function boot() {
  setupMqttSwitch();
  $("logout").addEventListener("click", logout);
  $("login-form").addEventListener("submit", login);
  // The skip link must not change the hash: the hash names the view.
  document.querySelector(".skip").addEventListener("click", (event) => {
    event.preventDefault();
    $("main").focus();
  });
  window.addEventListener("hashchange", () => render({focus: true}));
  // The accessory browser's finds are shown on the pairing view only.
  state.store.onLayout((kinds) => {
    if (state.synced && (kinds.has("layout") || currentView() === "pairing")) render();
  });
  loadSession();
}

async function loadSession() {
  try {
    start(await api.session());
  } catch (error) {
    if (error instanceof HttpError && error.status === 401) showLogin();
    else failed(`The gateway did not answer: ${error.message}. Retrying…`, loadSession);
  }
}

function showLogin(initialMessage = "") {
  let message = initialMessage;
  stopSocket();
  state.session = null;
  forgetStatuses(); // the next user must not see this one's answers
  forgetHistory();
  if (sessionStorage.getItem(RESTORING)) {
    message = "The gateway restarted on the restored backup: log in again.";
    showRestoreBanner("pending", "The gateway is back: log in to see the restored home.");
  }
  $("login").hidden = false;
  $("tabs").hidden = true;
  $("who").hidden = true;
  $("view").replaceChildren();
  $("login-error").textContent = message;
  $("login-error").className = "muted"; // "logged out", "session ended": news, not an error
  $("login-password").value = "";
  setSocketStatus("page: logged out");
  $("login-user").focus();
}

async function login(event) {
  event.preventDefault();
  const user = $("login-user").value.trim();
  const password = $("login-password").value;
  $("login-error").textContent = "";
  try {
    const session = await api.login(user, password);
    $("login-password").value = "";
    start(session);
  } catch (error) {
    $("login-error").textContent = `✕ ${error.message}`;
    $("login-error").className = "error";
    $("login-password").select();
  }
}

async function logout() {
  try { await api.logout(state.session.csrf); } catch { /* the session may be over already */ }
  $("login-user").value = ""; // a shared screen: the next person types their own name
  showLogin("You are logged out.");
}

function start(session) {
  const firstStart = !state.session || state.session.base !== session.base || state.session.user !== session.user;
  state.session = session;
  useGrammar(session.topics);
  if (!state.commands) state.commands = new Commands(session, null);
  state.commands.session = session;
  if (firstStart) state.log = new Log(session.base);
  $("login").hidden = true;
  $("tabs").hidden = false;
  $("who").hidden = false;
  $("who-user").textContent = session.user ?? (session.login ? "" : "no login required");
  $("who-role").textContent = session.role === "admin" ? "admin" : "guest";
  $("logout").hidden = !session.login;
  for (const tab of document.querySelectorAll("#tabs [data-admin]")) tab.hidden = !isAdmin();
  connect();
}

function failed(message, retry) {
  $("view").replaceChildren(h("p", {className: "error", role: "alert"}, message));
  setTimeout(retry, 3000);
}

// The WebSocket ------------------------------------------------------------------------------------

function connect() {
  stopSocket();
  state.synced = false;
  const socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  state.socket = socket;
  setSocketStatus("page: connecting…");
  socket.addEventListener("open", () => {
    // The server sends its whole snapshot again: start from nothing.
    state.store.reset(state.session.base);
    setSocketStatus("page: loading the home…");
  });
  socket.addEventListener("message", (event) => received(event.data));
  socket.addEventListener("close", () => {
    if (state.socket !== socket) return; // replaced or stopped on purpose
    state.socket = null;
    state.synced = false;
    // What the page showed of the broker and the gateway is no longer known.
    for (const [id, text] of [["status-broker", "broker: ? unknown"], ["status-gateway", "gateway: ? unknown"]]) {
      $(id).textContent = text;
      $(id).dataset.state = "pending";
    }
    scheduleReconnect();
  });
}

function stopSocket() {
  clearTimeout(state.retryTimer);
  const socket = state.socket;
  state.socket = null;
  socket?.close(1000);
}

/** Capped, jittered exponential backoff; /api/session first: a 401 means the session ended. */
function scheduleReconnect() {
  // While a restore restarts the gateway, every half second: it is back within seconds.
  const seconds = sessionStorage.getItem(RESTORING) ? 0.5 : Math.min(30, 2 ** state.retry) * (0.5 + Math.random() / 2);
  state.retry += 1;
  setSocketStatus(`page: ✕ disconnected, reconnecting in ${Math.ceil(seconds)} s`);
  state.retryTimer = setTimeout(async () => {
    try {
      start(await api.session());
    } catch (error) {
      if (error instanceof HttpError && error.status === 401) showLogin("Your session ended: log in again.");
      else scheduleReconnect();
    }
  }, seconds * 1000);
}

function received(text) {
  let message;
  try { message = JSON.parse(text); } catch { return; }
  const base = state.session.base;
  if (message.type === "message") {
    if (isTransient(base, message.topic)) {
      state.commands.received(message.topic, message.payload);
      state.log.add(message.topic, message.payload);
    } else {
      state.store.put(message.topic, message.payload);
    }
  } else if (message.type === "synced") {
    state.synced = true;
    state.retry = 0;
    setSocketStatus("page: ✓ live");
    const restored = sessionStorage.getItem(RESTORING);
    if (restored) {
      sessionStorage.removeItem(RESTORING);
      showRestoreBanner("ok", `Restored: the gateway is back on ${restored.split(" is staged")[0]}.`);
    }
    render();
  } else if (message.type === "broker") {
    const status = $("status-broker");
    status.textContent = message.connected ? "broker: ✓ connected" : "broker: ✕ disconnected";
    status.dataset.state = message.connected ? "ok" : "error";
  }
}

function setSocketStatus(text) {
  const status = $("status-socket");
  status.textContent = text;
  status.dataset.state = text.includes("✓") ? "ok" : text.includes("✕") ? "error" : "pending";
}

function watchGatewayState() {
  const topic = stateTopic(state.session.base);
  const show = (payload) => {
    const status = $("status-gateway");
    status.textContent = payload === "online" ? "gateway: ✓ online" : payload === "offline" ? "gateway: ✕ offline" : "gateway: ? unknown";
    status.dataset.state = payload === "online" ? "ok" : payload === "offline" ? "error" : "pending";
  };
  state.cleanups.push(state.store.watch(topic, show));
  show(state.store.get(topic));
}

// Views ---------------------------------------------------------------------------------------------

function currentView() {
  const view = location.hash.replace(/^#/, "").split("/")[0] || "home";
  return ["home", "pairing", "manage", "log"].includes(view) ? view : "home";
}

/** The accessory whose detail is shown (#accessory/<id>), or null. */
function currentDetail() {
  const match = /^#accessory\/(.+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

function currentHome(homes) {
  return homes.find((home) => home.id === state.homeId) ?? homes.find((home) => home.primary) ?? homes[0];
}

/** Renders the view anew; what someone typed (inputs with an id they changed), the disclosures
 *  they opened and the focus stay. */
function render({focus = false} = {}) {
  if (!state.session) return;
  const container = $("view");
  const kept = keepInputs(container);
  for (const cleanup of state.cleanups) cleanup();
  state.cleanups = [];
  watchGatewayState();
  const view = currentView();
  for (const tab of document.querySelectorAll("#tabs a")) {
    if (tab.dataset.view === view) tab.setAttribute("aria-current", "page");
    else tab.removeAttribute("aria-current");
  }
  if (!state.synced) {
    container.replaceChildren(h("p", {className: "muted", dataset: {testid: "loading"}}, "Loading the home…"));
    return;
  }
  const homes = state.store.homes();
  const home = currentHome(homes);
  const detail = view === "home" ? currentDetail() : null;
  const ctx = {
    store: state.store, commands: state.commands, session: state.session, admin: isAdmin(), home, browser: state.browser, detail,
    watch: (topic, listener) => state.cleanups.push(state.store.watch(topic, listener)),
    cleanup: (stop) => state.cleanups.push(stop),
    fresh: focus, // the view was chosen just now (not re-rendered for a layout change): ask for its history anew
  };
  const content = [];
  if (homes.length > 1) content.push(homePicker(homes, home));
  if ((view === "pairing" || view === "manage") && !isAdmin()) {
    content.push(h("p", {className: "notice", dataset: {testid: "admins-only"}}, "Only admins pair accessories and manage the home; you are a guest."));
  } else if (view === "log") {
    content.push(state.log.render());
  } else if (!home) {
    content.push(h("p", {className: "muted"}, "The gateway has published no home yet."));
  } else if (view === "pairing") {
    content.push(renderPairing(ctx));
  } else if (view === "manage") {
    if (state.session.backup) content.push(backupSection(ctx));
    content.push(renderManage(ctx));
  } else {
    content.push(renderHome(ctx));
  }
  container.replaceChildren(...content);
  document.title = home ? `${home.name} · HomeGate` : "HomeGate";
  restoreInputs(container, kept);
  if (focus) moveFocus(view, detail);
}

/** After a change of view: the detail's title when a detail opens, the tile's name when it
 *  closes, else the main region. */
function moveFocus(view, detail) {
  if (detail) {
    state.lastDetail = detail;
    window.scrollTo(0, 0);
    $("detail-title")?.focus();
    return;
  }
  const back = state.lastDetail;
  state.lastDetail = null;
  const tile = back && view === "home" ? document.querySelector(`[data-testid=tile-name][data-accessory="${CSS.escape(back)}"]`) : null;
  if (tile) {
    tile.scrollIntoView({block: "center"});
    tile.focus();
  } else {
    $("main").focus({preventScroll: true});
  }
}

// The "Show MQTT" switch: the topics and mosquitto_pub lines are hidden unless it is on, per
// browser (localStorage "homegate.mqtt": "shown"); <html data-mqtt> drives app.css.
function setupMqttSwitch() {
  const input = $("show-mqtt");
  const apply = () => {
    let shown = false;
    try { shown = localStorage.getItem(MQTT_KEY) === "shown"; } catch { shown = input.checked; }
    document.documentElement.dataset.mqtt = shown ? "shown" : "hidden";
    input.checked = shown;
  };
  input.addEventListener("change", () => {
    try {
      if (input.checked) localStorage.setItem(MQTT_KEY, "shown");
      else localStorage.removeItem(MQTT_KEY);
    } catch { /* storage off: this page only */ }
    document.documentElement.dataset.mqtt = input.checked ? "shown" : "hidden";
  });
  window.addEventListener("storage", (event) => { if (event.key === MQTT_KEY || event.key === null) apply(); });
  apply();
}

function homePicker(homes, home) {
  const select = h("select", {id: "home-picker", dataset: {testid: "home-picker"}},
    homes.map((each) => h("option", {value: each.id}, each.name + (each.primary ? " (primary)" : ""))));
  select.value = home?.id ?? "";
  select.addEventListener("change", () => {
    state.homeId = select.value;
    localStorage.setItem("homegate.home", select.value);
    render();
  });
  return h("label", {className: "home-picker"}, "Home ", select);
}

// Fields someone changed are marked dirty; their value survives a re-render (a layout change).
document.addEventListener("input", (event) => { if (event.target.id) event.target.dataset.dirty = "1"; });

function keepInputs(container) {
  const values = new Map();
  // Live controls (a characteristic's switch, slider, select) follow the retained value instead.
  for (const input of container.querySelectorAll(":is(input, select, textarea)[id][data-dirty]:not([data-live])")) {
    values.set(input.id, input.type === "checkbox" ? input.checked : input.value);
  }
  const open = new Set([...container.querySelectorAll("details[open][data-key]")].map((details) => details.dataset.key));
  return {values, open, focused: container.contains(document.activeElement) ? document.activeElement.id : null};
}

function restoreInputs(container, {values, open, focused}) {
  for (const details of container.querySelectorAll("details[data-key]")) {
    if (open.has(details.dataset.key)) details.open = true;
  }
  for (const [id, value] of values) {
    const input = document.getElementById(id);
    if (!input || !container.contains(input)) continue;
    if (input.type === "checkbox") input.checked = value;
    else input.value = value;
    input.dataset.dirty = "1";
  }
  if (focused) document.getElementById(focused)?.focus({preventScroll: true});
}

boot();
