// The accessory browser and pairing (admins): $request/browser/start|stop, the devices found on
// retained <base>/$browser/<device id>, $request/accessory/pair by device or by host and port,
// $request/accessory/unpair (docs/mqtt-api.md section 7). The setup code is sent in the request's
// body only: it is never put into the URL, the log panel or a command line shown on the page.

import {h, mqttDetails, mosquittoPub, statusLine, setStatus, setStatusOf, humanize} from "./dom.js";
import {errorText} from "./api.js";
import {httpText} from "./home.js";
import {categoryIcon} from "./icons.js";
import {browserPrefix, requestTopic} from "./topics.js";

/** ctx: {store, commands, session, home, browser: {browsing}} */
export function renderPairing(ctx) {
  const base = ctx.session.base;
  return h("section", {className: "pairing", "aria-labelledby": "pairing-title", dataset: {testid: "pairing"}},
    h("h1", {id: "pairing-title"}, "Pairing"),
    h("p", {}, "HomeGate pairs as the HomeKit controller: the accessory must not be paired with another controller (reset it there first). Its setup code is on the device or its box."),
    browserSection(ctx, base),
    manualSection(ctx, base),
    unpairSection(ctx, base));
}

function browserSection(ctx, base) {
  const status = statusLine("browser-status", "browser");
  const state = ctx.browser.browsing;
  if (!status.dataset.kind) setStatus(status, "info", state === undefined ? "Browser: state unknown (start it to look for accessories)" : state ? "Browser: on, looking for accessories" : "Browser: off");
  const toggle = (verb) => async () => {
    setStatus(status, "pending", verb === "start" ? "starting the browser…" : "stopping the browser…");
    try {
      const answer = await ctx.commands.request("browser", verb);
      if (!answer.ok) return setStatus(status, "error", errorText(answer));
      ctx.browser.browsing = answer.data?.browsing;
      setStatus(status, "ok", answer.data?.browsing ? "Browser: on, looking for accessories" : "Browser: off");
    } catch (error) {
      setStatus(status, "error", httpText(error));
    }
  };
  const devices = ctx.store.browserDevices();
  return h("section", {"aria-labelledby": "browser-title", className: "card"},
    h("h2", {id: "browser-title"}, "Accessory browser"),
    h("div", {className: "buttons"},
      h("button", {type: "button", dataset: {testid: "browser-start"}, onclick: toggle("start")}, "Start browsing"),
      h("button", {type: "button", className: "secondary", dataset: {testid: "browser-stop"}, onclick: toggle("stop")}, "Stop browsing")),
    status,
    mqttDetails(`${browserPrefix(base)}#`, mosquittoPub(requestTopic(base, "browser", "start"), "{}")),
    // A found device leaves the list once paired, and its own status line with it: the outcome
    // of the last pairing from the list stays here.
    statusLine("last-pairing", "pair:last"),
    h("h3", {className: "found-title"}, `Found (${devices.length})`),
    devices.length === 0 ? h("p", {className: "muted", dataset: {testid: "found-none"}}, "No unpaired accessory found yet.")
      : h("ul", {className: "plain found", dataset: {testid: "found"}}, devices.map((device) => foundDevice(ctx, device))));
}

function foundDevice(ctx, device) {
  const status = statusLine("pair-status", `pair:${device.device}`);
  const form = pairForm(ctx, `found-${device.device}`, status, () => ({device: device.device}), device.paired, device.name ?? device.device);
  return h("li", {className: "found-device", dataset: {testid: "found-device", device: device.device}},
    categoryIcon(device.categoryName), " ",
    h("strong", {}, device.name ?? device.device), " ",
    h("span", {className: "muted"}, `${humanize(device.categoryName ?? "other")}${device.model ? " · " + device.model : ""} · ${device.host}:${device.port} · id ${device.device}`),
    device.paired ? h("p", {className: "warning"}, "⚠ Paired with another controller: remove it there (or reset it) before pairing here.") : null,
    form, status,
    mqttDetails(device.topic, null));
}

/** A setup code field: a password-like input (not remembered by the browser, never in a URL). */
function codeInput(id) {
  return h("input", {id, name: "setup-code", type: "password", autocomplete: "off", inputmode: "numeric", required: true,
    pattern: "[0-9]{3}-?[0-9]{2}-?[0-9]{3}", placeholder: "123-45-678", spellcheck: "false", dataset: {testid: "setup-code"}});
}

function roomSelect(ctx, id) {
  return h("select", {id, dataset: {testid: "pair-room"}},
    h("option", {value: ""}, "(default room)"),
    (ctx.home?.rooms ?? []).filter((room) => room.id !== "default-room").map((room) => h("option", {value: room.name}, room.name)));
}

// The form's method is "dialog"-free: submit is always handled here, so nothing reaches a URL.
// `name`: a found device's name; its outcome is also kept on the browser's "last pairing" line.
function pairForm(ctx, key, status, target, disabled, name) {
  const code = codeInput(`${key}-code`);
  code.disabled = !!disabled;
  const room = roomSelect(ctx, `${key}-room`);
  const form = h("form", {className: "pair-form", autocomplete: "off", dataset: {testid: "pair-form"}},
    h("label", {}, "Setup code ", code),
    h("label", {}, "Room ", room),
    h("button", {type: "submit", disabled: !!disabled, dataset: {testid: "pair"}}, "Pair"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {...target(), code: normalizeCode(code.value)};
    if (room.value) body.room = room.value;
    if (ctx.home) body.home = ctx.home.name;
    setStatus(status, "pending", "pairing… (this takes a few seconds)");
    try {
      const answer = await ctx.commands.request("accessory", "pair", body);
      if (answer.ok) {
        code.value = "";
        const ids = answer.data?.accessories ?? [];
        const text = `paired: ${ids.length} accessor${ids.length === 1 ? "y" : "ies"} (${ids.join(", ")})`;
        setStatus(status, "ok", text);
        if (name) setStatusOf("pair:last", "ok", `${name} ${text}`);
      } else {
        setStatus(status, "error", errorText(answer));
        if (name) setStatusOf("pair:last", "error", `${name}: ${errorText(answer)}`);
      }
    } catch (error) {
      setStatus(status, "error", httpText(error));
    }
  });
  return form;
}

// "03145154" -> "031-45-154": HAP's form of a setup code.
function normalizeCode(text) {
  const digits = text.replace(/\D/g, "");
  return digits.length === 8 ? `${digits.slice(0, 3)}-${digits.slice(3, 5)}-${digits.slice(5)}` : text.trim();
}

function manualSection(ctx, base) {
  const status = statusLine("manual-pair-status", "pair:manual");
  const host = h("input", {id: "manual-host", required: true, placeholder: "192.168.1.40", autocomplete: "off", dataset: {testid: "manual-host"}});
  const port = h("input", {id: "manual-port", type: "number", min: "1", max: "65535", required: true, placeholder: "51826", dataset: {testid: "manual-port"}});
  const form = pairForm(ctx, "manual", status, () => ({host: host.value.trim(), port: Number(port.value)}));
  form.prepend(h("label", {}, "Host ", host), h("label", {}, "Port ", port));
  return h("section", {"aria-labelledby": "manual-title", className: "card", dataset: {testid: "manual-pair"}},
    h("h2", {id: "manual-title"}, "Pair by address"),
    h("p", {className: "muted"}, "For an accessory the browser does not find (another network, no mDNS): its host and HAP port."),
    form, status,
    mqttDetails(requestTopic(base, "accessory", "pair"), mosquittoPub(requestTopic(base, "accessory", "pair"), JSON.stringify({host: "HOST", port: 51826, code: "XXX-XX-XXX"}))));
}

function unpairSection(ctx, base) {
  const status = statusLine("unpair-status", "unpair");
  const accessories = ctx.home ? [...ctx.store.accessoriesById(ctx.home).values()].filter((accessory) => !accessory.bridge) : [];
  const select = h("select", {id: "unpair-accessory", dataset: {testid: "unpair-accessory"}},
    accessories.map((accessory) => h("option", {value: accessory.id}, `${accessory.name} (${accessory.id})`)));
  const button = h("button", {type: "submit", className: "danger", dataset: {testid: "unpair"}}, "Unpair…");
  let armed = null;
  const form = h("form", {className: "inline"}, h("label", {className: "field"}, h("span", {}, "Accessory"), select), button);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    // Two steps: the first press asks, the second (within 8 s) unpairs.
    if (armed !== select.value) {
      armed = select.value;
      button.textContent = "Press again to unpair";
      setTimeout(() => { armed = null; button.textContent = "Unpair…"; }, 8000);
      return;
    }
    armed = null;
    button.textContent = "Unpair…";
    setStatus(status, "pending", "unpairing…");
    try {
      const answer = await ctx.commands.request("accessory", "unpair", {home: ctx.home?.name, accessory: select.value});
      setStatus(status, answer.ok ? "ok" : "error", answer.ok ? "unpaired" : errorText(answer));
    } catch (error) {
      setStatus(status, "error", httpText(error));
    }
  });
  return h("section", {"aria-labelledby": "unpair-title", className: "card"},
    h("h2", {id: "unpair-title"}, "Unpair"),
    h("p", {className: "muted"}, "Removes the pairing on the device and here (a bridge takes the accessories behind it). Simulated accessories cannot be unpaired."),
    form, status,
    mqttDetails(requestTopic(base, "accessory", "unpair"), mosquittoPub(requestTopic(base, "accessory", "unpair"), JSON.stringify({accessory: select.value || "ID"}))));
}
