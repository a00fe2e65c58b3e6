// What the page knows of the broker: the current payload of every state topic under the base
// (values, labels, $meta, $reachable, $layout, $browser, $state), fed by the WebSocket, and the
// home tree assembled from $layout as docs/mqtt-api.md section 6 describes it.

import {browserPrefix, layoutTopic} from "./topics.js";

/** Topics that carry commands or one-off answers, never state (kept out of the store, sent to
 *  the log): the grammar's own rule. */
export {isTransient} from "./topics.js";

export class Store {
  constructor() {
    this.base = "homegate";
    this.topics = new Map();        // topic -> payload text
    this.topicListeners = new Map(); // topic -> Set of callbacks(payload or undefined)
    this.layoutListeners = new Set();
    this.layoutTimer = null;
  }

  reset(base) {
    this.base = base;
    this.topics.clear();
  }

  /** A state message: an empty payload clears the topic (a retained topic removed). */
  put(topic, payload) {
    if (payload === "") this.topics.delete(topic);
    else this.topics.set(topic, payload);
    for (const listener of this.topicListeners.get(topic) ?? []) listener(payload === "" ? undefined : payload);
    if (topic.startsWith(layoutTopic(this.base))) this.layoutChanged("layout");
    else if (topic.startsWith(browserPrefix(this.base))) this.layoutChanged("browser");
  }

  get(topic) { return this.topics.get(topic); }

  /** The payload parsed as JSON; undefined when absent, the text itself when it is not JSON. */
  json(topic) {
    const text = this.topics.get(topic);
    if (text === undefined) return undefined;
    try { return JSON.parse(text); } catch { return text; }
  }

  /** Calls `listener(payload)` on every change of `topic`; returns the function that stops it. */
  watch(topic, listener) {
    if (!this.topicListeners.has(topic)) this.topicListeners.set(topic, new Set());
    this.topicListeners.get(topic).add(listener);
    return () => this.topicListeners.get(topic)?.delete(listener);
  }

  /** Structure changes arrive in bursts (one part per room): listeners hear once per burst, with
   *  what changed: a Set of "layout" (the homes) and "browser" (the accessory browser's finds). */
  onLayout(listener) { this.layoutListeners.add(listener); }

  layoutChanged(kind) {
    this.changedKinds ??= new Set();
    this.changedKinds.add(kind);
    clearTimeout(this.layoutTimer);
    this.layoutTimer = setTimeout(() => {
      const kinds = this.changedKinds;
      this.changedKinds = new Set();
      for (const listener of this.layoutListeners) listener(kinds);
    }, 60);
  }

  /** The homes: [{id, name, primary, topic, rooms: [{..., accessories: [...] | null}], zones, actionSets, triggers}].
   *  A room whose parts are not all there yet has `accessories: null` (still loading). */
  homes() {
    const index = this.json(layoutTopic(this.base));
    if (!index || !Array.isArray(index.homes)) return [];
    return index.homes.map((entry) => this.home(entry)).filter(Boolean);
  }

  home(entry) {
    const part = this.json(entry.layout);
    if (!part || typeof part !== "object") return {...entry, rooms: [], zones: [], actionSets: [], triggers: [], serviceGroups: [], loading: true};
    const rooms = (part.rooms ?? []).map((room) => ({...room, accessories: this.roomAccessories(part.id, room)}));
    return {
      id: part.id, name: part.name, primary: part.primary, topic: part.topic, rooms,
      zones: part.zones ?? [], actionSets: part.actionSets ?? [], triggers: part.triggers ?? [],
      serviceGroups: part.serviceGroups ?? [], loading: rooms.some((room) => room.accessories === null),
    };
  }

  /** A room is complete when it has `parts` parts that all name the same home and room. */
  roomAccessories(homeId, room) {
    const accessories = [];
    const topics = room.layout ?? [];
    for (const topic of topics) {
      const part = this.json(topic);
      if (!part || part.room !== room.id || part.home !== homeId || part.parts !== topics.length) return null;
      accessories.push(...(part.accessories ?? []));
    }
    return accessories;
  }

  /** Every accessory of a home, by id, with the room it is in. */
  accessoriesById(home) {
    const byId = new Map();
    for (const room of home.rooms) {
      for (const accessory of room.accessories ?? []) byId.set(accessory.id, {...accessory, roomName: room.name});
    }
    return byId;
  }

  /** The accessory browser's finds: retained <base>/$browser/<device id>. */
  browserDevices() {
    const prefix = browserPrefix(this.base);
    const devices = [];
    for (const [topic, payload] of this.topics) {
      if (!topic.startsWith(prefix)) continue;
      try { devices.push({topic, ...JSON.parse(payload)}); } catch { /* not ours */ }
    }
    return devices.sort((a, b) => String(a.name).localeCompare(String(b.name)));
  }
}
