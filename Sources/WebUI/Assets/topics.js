// The topic grammar of docs/mqtt-api.md as the gateway defines it (Sources/Wire/TopicGrammar.swift)
// and serves it with the session ("topics" in /api/session and /api/login): the reserved levels
// ($request, $response, $events, ...), the attributes ($reachable, $meta, ...) and the verbs
// (set, get, execute). Scripts name an entry by
// its key and take its text from here; none spells a level, an attribute or a verb of its own.

let grammar = null;

/** Takes the grammar the gateway served with the session. */
export function useGrammar(served) {
  if (served?.levels && served?.verbs && served?.attributes) grammar = served;
}

function level(name) {
  const text = grammar?.levels?.[name];
  if (!text) throw new Error(`the gateway served no topic level "${name}"`);
  return text;
}

function verb(name) {
  const text = grammar?.verbs?.[name];
  if (!text) throw new Error(`the gateway served no verb "${name}"`);
  return text;
}

function attribute(name) {
  const text = grammar?.attributes?.[name];
  if (!text) throw new Error(`the gateway served no attribute "${name}"`);
  return text;
}

/** `<topic>/<attribute>`: an accessory's `$reachable`, `$last-seen`, `$snapshot`, a `$meta`. */
export function attributeTopic(topic, name) {
  return `${topic}/${attribute(name)}`;
}

/** `<base>/$state`: `online` or `offline`. */
export function stateTopic(base) {
  return `${base}/${level("state")}`;
}

/** `<topic>/<verb>`: a set, get or execute topic. */
export function commandTopic(topic, name) {
  return `${topic}/${verb(name)}`;
}

/** `<base>/$request/<object>/<verb>`. */
export function requestTopic(base, object, requestVerb) {
  return `${base}/${level("request")}/${object}/${requestVerb}`;
}

/** `<base>/$response/`, the start of every answer's topic. */
export function responsePrefix(base) {
  return `${base}/${level("response")}/`;
}

/** `<base>/$events`. */
export function eventsTopic(base) {
  return `${base}/${level("events")}`;
}

/** `<base>/$browser/`, the start of every found accessory's topic. */
export function browserPrefix(base) {
  return `${base}/${level("browser")}/`;
}

/** `<base>/$layout`, the layout's index (its parts below it). */
export function layoutTopic(base) {
  return `${base}/${level("layout")}`;
}

/** `<home>/$action-sets/<id>/execute`. */
export function actionSetTopic(homeTopic, id) {
  return `${homeTopic}/${level("actionSets")}/${id}/${verb("execute")}`;
}

/** Whether `topic` is an acknowledgement: `.../set/result`, `.../get/result`, `.../execute/result`. */
export function isAcknowledgement(topic) {
  return Object.values(grammar?.verbs ?? {}).some((each) => topic.endsWith(`/${each}/${grammar.result}`));
}

/** Whether `topic` carries a command or a one-off answer, never state: a verb or its
 *  acknowledgement, a request or an answer, a synchronisation marker, an event. */
export function isTransient(base, topic) {
  return Object.values(grammar?.verbs ?? {}).some((each) => topic.endsWith(`/${each}`)) || isAcknowledgement(topic)
    || ["response", "request", "sync"].some((name) => topic.startsWith(`${base}/${level(name)}/`))
    || topic === eventsTopic(base);
}
