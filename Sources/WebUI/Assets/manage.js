// Management (admins): rooms, zones, accessories and services, action sets, timer triggers; each
// change is a request of docs/mqtt-api.md section 7, answered on $response with our transaction.
// The page shows what $layout says afterwards: nothing changes on screen before the gateway
// republishes the layout.

import {h, mqttDetails, mosquittoPub, statusLine, setStatus, humanize, formatValue, removeButton} from "./dom.js";
import {errorText} from "./api.js";
import {httpText, cssId} from "./home.js";
import {requestTopic} from "./topics.js";

/** ctx: {store, commands, session, home} */
export function renderManage(ctx) {
  const {home} = ctx;
  const byId = ctx.store.accessoriesById(home);
  return h("section", {className: "manage", "aria-labelledby": "manage-title", dataset: {testid: "manage"}},
    h("h1", {id: "manage-title"}, `Manage ${home.name}`),
    h("p", {className: "muted"}, "Every change is a request on ", h("code", {}, requestTopic(ctx.session.base, "<object>", "<verb>")),
      "; its answer shows beside the form and in the log."),
    roomsSection(ctx, home),
    zonesSection(ctx, home),
    accessoriesSection(ctx, home, byId),
    actionSetsSection(ctx, home, byId),
    triggersSection(ctx, home));
}

// Requests ------------------------------------------------------------------------------------------

/** Sends a request for the current home and shows its answer on `status`. */
async function act(ctx, status, object, verb, body, done) {
  setStatus(status, "pending", `${object}/${verb}: waiting for the gateway`);
  try {
    const answer = await ctx.commands.request(object, verb, {home: ctx.home.name, ...body});
    if (answer.ok) setStatus(status, "ok", done ?? `${object}/${verb}: done`);
    else setStatus(status, "error", errorText(answer));
    return answer;
  } catch (error) {
    setStatus(status, "error", httpText(error));
    return null;
  }
}

function requestLine(ctx, object, verb, body) {
  const topic = requestTopic(ctx.session.base, object, verb);
  return mqttDetails(topic, mosquittoPub(topic, JSON.stringify(body)));
}

/** An inline form: labelled fields and a submit button; `submit(form)` runs on submit. */
function inlineForm(testid, fields, buttonText, submit, buttonTestid) {
  // The button's id comes from its first field's: focus stays on it when the view is rendered anew.
  const firstId = [fields].flat().map((field) => field.querySelector?.("[id]")?.id).find(Boolean);
  const form = h("form", {className: "inline", dataset: {testid}}, fields,
    h("button", {type: "submit", className: "small", id: firstId ? `${firstId}-submit` : null,
      dataset: {testid: buttonTestid ?? `${testid}-submit`}}, buttonText));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit(form);
  });
  return form;
}

function textField(id, label, value = "", testid = undefined) {
  const input = h("input", {id, required: true, autocomplete: "off", dataset: testid ? {testid} : {}});
  if (value) input.value = value;
  return {input, element: h("label", {className: "field"}, h("span", {}, label), input)};
}

function selectField(id, label, options, testid = undefined) {
  const select = h("select", {id, dataset: testid ? {testid} : {}},
    options.map(([value, text]) => h("option", {value}, text)));
  return {select, element: h("label", {className: "field"}, h("span", {}, label), select)};
}

/** Empties a field after its request succeeded (the view may have been rendered anew meanwhile). */
function clearField(id) {
  const input = document.getElementById(id);
  if (!input) return;
  input.value = "";
  delete input.dataset.dirty;
}

// Rooms ---------------------------------------------------------------------------------------------

function roomsSection(ctx, home) {
  const status = statusLine("room-add-status", "room-add");
  const name = textField("room-add-name", "New room", "", "room-add-name");
  return h("section", {className: "card", "aria-labelledby": "m-rooms", dataset: {testid: "manage-rooms"}},
    h("h2", {id: "m-rooms"}, "Rooms"),
    h("ul", {className: "plain rows"}, home.rooms.map((room) => roomRow(ctx, room))),
    inlineForm("room-add", name.element, "Add room", () =>
      act(ctx, status, "room", "add", {name: name.input.value.trim()}, `room ${name.input.value.trim()} added`)
        .then((answer) => { if (answer?.ok) clearField(name.input.id); })),
    status,
    requestLine(ctx, "room", "add", {name: "Attic"}));
}

function roomRow(ctx, room) {
  const status = statusLine("room-status", `room:${room.id}`);
  const isDefault = room.id === "default-room";
  const rename = textField(`room-rename-${cssId(room.id)}`, `New name for ${room.name}`, room.name, "room-new-name");
  return h("li", {className: "row", dataset: {testid: "manage-room", room: room.id}},
    h("strong", {}, room.name), h("span", {className: "muted"}, ` ${room.accessories?.length ?? "?"} accessor${room.accessories?.length === 1 ? "y" : "ies"}`),
    isDefault ? h("span", {className: "muted"}, " (the default room: accessories without a room)") : [
      inlineForm("room-rename", rename.element, "Rename", () =>
        act(ctx, status, "room", "rename", {room: room.name, newName: rename.input.value.trim()}, `renamed to ${rename.input.value.trim()}`)),
      removeButton(room.name, "room-remove", () => act(ctx, status, "room", "remove", {room: room.name}, `${room.name} removed`)),
    ],
    status);
}

// Zones ---------------------------------------------------------------------------------------------

function zonesSection(ctx, home) {
  const status = statusLine("zone-add-status", "zone-add");
  const name = textField("zone-add-name", "New zone", "", "zone-add-name");
  return h("section", {className: "card", "aria-labelledby": "m-zones", dataset: {testid: "manage-zones"}},
    h("h2", {id: "m-zones"}, "Zones"),
    home.zones.length ? h("ul", {className: "plain rows"}, home.zones.map((zone) => zoneRow(ctx, home, zone)))
      : h("p", {className: "muted"}, "No zones."),
    inlineForm("zone-add", name.element, "Add zone", () =>
      act(ctx, status, "zone", "add", {name: name.input.value.trim()}, `zone ${name.input.value.trim()} added`)
        .then((answer) => { if (answer?.ok) clearField(name.input.id); })),
    status,
    requestLine(ctx, "zone", "add-room", {zone: "Upstairs", room: "Bedroom"}));
}

function zoneRow(ctx, home, zone) {
  const status = statusLine("zone-status", `zone:${zone.id}`);
  const rename = textField(`zone-rename-${cssId(zone.id)}`, `New name for ${zone.name}`, zone.name, "zone-new-name");
  const others = home.rooms.filter((room) => room.id !== "default-room" && !zone.rooms.includes(room.name));
  const addRoom = selectField(`zone-room-${cssId(zone.id)}`, "Room", others.map((room) => [room.name, room.name]), "zone-room");
  return h("li", {className: "row", dataset: {testid: "manage-zone", zone: zone.id}},
    h("strong", {}, zone.name),
    h("ul", {className: "chips", "aria-label": `Rooms of ${zone.name}`}, zone.rooms.map((room) => h("li", {},
      room, " ", h("button", {type: "button", className: "small secondary", "aria-label": `Take ${room} out of ${zone.name}`,
        onclick: () => act(ctx, status, "zone", "remove-room", {zone: zone.name, room}, `${room} taken out of ${zone.name}`)}, "✕")))),
    others.length ? inlineForm("zone-add-room", addRoom.element, "Add to zone", () =>
      act(ctx, status, "zone", "add-room", {zone: zone.name, room: addRoom.select.value}, `${addRoom.select.value} added to ${zone.name}`)) : null,
    inlineForm("zone-rename", rename.element, "Rename", () =>
      act(ctx, status, "zone", "rename", {zone: zone.name, newName: rename.input.value.trim()}, `renamed to ${rename.input.value.trim()}`)),
    removeButton(zone.name, "zone-remove", () => act(ctx, status, "zone", "remove", {zone: zone.name}, `${zone.name} removed`)),
    status);
}

// Accessories and services --------------------------------------------------------------------------

function accessoriesSection(ctx, home, byId) {
  return h("section", {className: "card", "aria-labelledby": "m-accessories", dataset: {testid: "manage-accessories"}},
    h("h2", {id: "m-accessories"}, "Accessories"),
    h("ul", {className: "plain rows"}, [...byId.values()].map((accessory) => accessoryRow(ctx, home, accessory))),
    requestLine(ctx, "accessory", "assign-room", {accessory: "sim-lamp-1", room: "Kitchen"}));
}

function accessoryRow(ctx, home, accessory) {
  const status = statusLine("accessory-status", `accessory:${accessory.id}`);
  const key = cssId(accessory.id);
  const rename = textField(`acc-rename-${key}`, `New name for ${accessory.name}`, accessory.name, "accessory-new-name");
  const room = selectField(`acc-room-${key}`, "Room", home.rooms.map((each) => [each.name, each.name]), "accessory-room");
  room.select.value = accessory.roomName;
  return h("li", {className: "row", dataset: {testid: "manage-accessory", accessory: accessory.id}},
    h("strong", {}, accessory.name), h("span", {className: "muted"}, ` ${accessory.id} · in ${accessory.roomName}`),
    inlineForm("accessory-rename", rename.element, "Rename", () =>
      act(ctx, status, "accessory", "rename", {accessory: accessory.id, newName: rename.input.value.trim()}, `renamed to ${rename.input.value.trim()}`)),
    inlineForm("accessory-assign", room.element, "Move", () =>
      act(ctx, status, "accessory", "assign-room", {accessory: accessory.id, room: room.select.value}, `moved to ${room.select.value}`)),
    accessory.services.map((service) => serviceRow(ctx, accessory, service, status)),
    status);
}

function serviceRow(ctx, accessory, service, status) {
  const current = service.name ?? "";
  const rename = textField(`svc-rename-${cssId(accessory.id)}-${service.iid}`, `Service ${humanize(service.type)} (iid ${service.iid})`, current, "service-new-name");
  return inlineForm("service-rename", rename.element, "Rename service", () =>
    act(ctx, status, "service", "rename", {accessory: accessory.id, service: service.iid, newName: rename.input.value.trim()},
      `service renamed to ${rename.input.value.trim()}`));
}

// Action sets ---------------------------------------------------------------------------------------

/** Every writable characteristic of the home, for an action: [value "accessory|iid", text]. */
function writableCharacteristics(byId) {
  const options = [];
  for (const accessory of byId.values()) {
    for (const service of accessory.services) {
      for (const characteristic of service.characteristics) {
        if (!characteristic.perms?.includes("pw")) continue;
        options.push([`${accessory.id}|${characteristic.iid}`,
          `${accessory.roomName} · ${accessory.name} · ${service.name ?? humanize(service.type)} · ${humanize(characteristic.type)}`]);
      }
    }
  }
  return options;
}

function characteristicName(byId, action) {
  const accessory = byId.get(action.accessory);
  if (!accessory) return `${action.accessory} iid ${action.characteristic}`;
  for (const service of accessory.services) {
    const characteristic = service.characteristics.find((each) => each.iid === action.characteristic);
    if (characteristic) return `${accessory.name} · ${humanize(characteristic.type)}`;
  }
  return `${accessory.name} iid ${action.characteristic}`;
}

/** A typed value: JSON when it parses (true, 40, "text"), else the text (a label such as "secured"). */
function typedValue(text) {
  try { return JSON.parse(text); } catch { return text.trim(); }
}

function actionSetsSection(ctx, home, byId) {
  const status = statusLine("action-set-add-status", "action-set-add");
  const name = textField("action-set-add-name", "New action set", "", "action-set-add-name");
  return h("section", {className: "card", "aria-labelledby": "m-scenes", dataset: {testid: "manage-action-sets"}},
    h("h2", {id: "m-scenes"}, "Action sets"),
    home.actionSets.length ? h("ul", {className: "plain rows"}, home.actionSets.map((set) => actionSetRow(ctx, home, set, byId)))
      : h("p", {className: "muted"}, "No action sets."),
    inlineForm("action-set-add", name.element, "Add action set", () =>
      act(ctx, status, "action-set", "add", {name: name.input.value.trim()}, `action set ${name.input.value.trim()} added`)
        .then((answer) => { if (answer?.ok) clearField(name.input.id); })),
    status,
    requestLine(ctx, "action-set", "add-action", {actionSet: "Movie Night", characteristic: "~/living-room/floor-lamp/lightbulb/on", value: true}));
}

function actionSetRow(ctx, home, set, byId) {
  const status = statusLine("action-set-status", `action-set:${set.id}`);
  const key = cssId(set.id);
  const characteristic = selectField(`as-char-${key}`, "Characteristic", writableCharacteristics(byId), "action-characteristic");
  const value = textField(`as-value-${key}`, "Value (JSON or label)", "", "action-value");
  return h("li", {className: "row", dataset: {testid: "manage-action-set", actionSet: set.id}},
    h("strong", {}, set.name),
    h("ul", {className: "plain actions"}, set.actions.map((action) => h("li", {},
      `${characteristicName(byId, action)} = ${formatValue(action.value)} `,
      h("button", {type: "button", className: "small secondary", "aria-label": `Remove the action on ${characteristicName(byId, action)}`,
        onclick: () => act(ctx, status, "action-set", "remove-action", {actionSet: set.name, accessory: action.accessory, characteristic: action.characteristic}, "action removed")},
      "Remove action")))),
    inlineForm("action-add", [characteristic.element, value.element], "Add action", () => {
      const [accessory, iid] = characteristic.select.value.split("|");
      act(ctx, status, "action-set", "add-action", {actionSet: set.name, accessory, characteristic: Number(iid), value: typedValue(value.input.value)}, "action added");
    }),
    h("div", {className: "buttons"},
      h("button", {type: "button", className: "small", dataset: {testid: "action-set-execute"},
        onclick: () => act(ctx, status, "action-set", "execute", {actionSet: set.name}).then((answer) => {
          if (!answer?.ok) return;
          const results = answer.data?.results ?? [];
          setStatus(status, answer.data?.allOk === false ? "error" : "ok", `executed: ${results.filter((each) => each.ok).length} of ${results.length} writes acknowledged`);
        })}, "Execute"),
      removeButton(set.name, "action-set-remove", () => act(ctx, status, "action-set", "remove", {actionSet: set.name}, `${set.name} removed`))),
    status);
}

// Timer triggers ------------------------------------------------------------------------------------

/** "2027-01-01T07:00" (a datetime-local, local time) -> "2027-01-01T07:00:00+01:00". */
export function isoWithOffset(localText) {
  const date = new Date(localText);
  if (Number.isNaN(date.getTime())) return null;
  const pad = (number) => String(Math.abs(number)).padStart(2, "0");
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? "+" : "-";
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
    + `${sign}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
}

function recurrenceText(recurrence) {
  if (!recurrence) return "once";
  return `every ${recurrence.every === 1 ? "" : recurrence.every + " "}${recurrence.unit}${recurrence.every === 1 ? "" : "s"}`;
}

function triggersSection(ctx, home) {
  return h("section", {className: "card", "aria-labelledby": "m-triggers", dataset: {testid: "manage-triggers"}},
    h("h2", {id: "m-triggers"}, "Timer triggers"),
    home.triggers.length ? h("ul", {className: "plain rows"}, home.triggers.map((trigger) => triggerRow(ctx, trigger)))
      : h("p", {className: "muted"}, "No triggers."),
    triggerForm(ctx, home),
    requestLine(ctx, "trigger", "add", {name: "Morning", fireDate: "2027-01-01T07:00:00+01:00", recurrence: {unit: "day", every: 1}, actionSets: ["Movie Night"], enabled: true}));
}

function triggerRow(ctx, trigger) {
  const status = statusLine("trigger-status", `trigger:${trigger.id}`);
  const when = new Date(trigger.fireDate);
  return h("li", {className: "row", dataset: {testid: "manage-trigger", trigger: trigger.id}},
    h("strong", {}, trigger.name), " ",
    h("span", {className: "badge", dataset: {testid: "trigger-enabled"}}, trigger.enabled ? "✓ enabled" : "○ disabled"),
    h("p", {className: "muted"}, `${Number.isNaN(when.getTime()) ? trigger.fireDate : when.toLocaleString()}, ${recurrenceText(trigger.recurrence)}; runs ${trigger.actionSets.join(", ") || "nothing"}`),
    h("div", {className: "buttons"},
      h("button", {type: "button", className: "small", dataset: {testid: "trigger-toggle"},
        onclick: () => act(ctx, status, "trigger", trigger.enabled ? "disable" : "enable", {trigger: trigger.name},
          trigger.enabled ? "disabled" : "enabled")}, trigger.enabled ? "Disable" : "Enable"),
      removeButton(trigger.name, "trigger-remove", () => act(ctx, status, "trigger", "remove", {trigger: trigger.name}, `${trigger.name} removed`))),
    status);
}

function triggerForm(ctx, home) {
  const status = statusLine("trigger-add-status", "trigger-add");
  const name = textField("trigger-add-name", "Name", "", "trigger-add-name");
  const when = h("input", {id: "trigger-add-when", type: "datetime-local", required: true, dataset: {testid: "trigger-add-when"}});
  const unit = selectField("trigger-add-unit", "Repeats", [["", "never"], ["minute", "minutes"], ["hour", "hours"], ["day", "days"], ["week", "weeks"]], "trigger-add-unit");
  const every = h("input", {id: "trigger-add-every", type: "number", min: "1", value: "1", dataset: {testid: "trigger-add-every"}});
  const enabled = h("input", {id: "trigger-add-enabled", type: "checkbox", checked: true});
  const sets = home.actionSets.map((set) => ({set, box: h("input", {type: "checkbox", id: `trigger-add-set-${cssId(set.id)}`, value: set.name})}));
  const form = h("form", {className: "stack", dataset: {testid: "trigger-add"}},
    h("h3", {}, "Add a timer trigger"),
    name.element,
    h("label", {className: "field"}, h("span", {}, "First time (your local time)"), when),
    h("div", {className: "inline"}, unit.element, h("label", {className: "field"}, h("span", {}, "every"), every)),
    h("fieldset", {}, h("legend", {}, "Action sets to run"),
      sets.length ? sets.map(({set, box}) => h("label", {className: "check"}, box, ` ${set.name}`)) : h("p", {className: "muted"}, "Add an action set first.")),
    h("label", {className: "check"}, enabled, " enabled"),
    h("button", {type: "submit", dataset: {testid: "trigger-add-submit"}}, "Add trigger"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const fireDate = isoWithOffset(when.value);
    if (!fireDate) return setStatus(status, "error", "give the first time");
    const recurrence = unit.select.value ? {unit: unit.select.value, every: Math.max(1, Number(every.value) || 1)} : null;
    act(ctx, status, "trigger", "add", {name: name.input.value.trim(), fireDate, recurrence,
      actionSets: sets.filter(({box}) => box.checked).map(({set}) => set.name), enabled: enabled.checked}, `trigger ${name.input.value.trim()} added`)
      .then((answer) => { if (answer?.ok) { clearField(name.input.id); clearField(when.id); } });
  });
  return h("div", {}, form, status);
}
