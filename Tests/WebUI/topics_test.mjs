// The page's topic grammar (Sources/WebUI/Assets/topics.js) on the grammar the gateway serves
// (Sources/Wire/TopicGrammar.swift's JSON, as /api/session gives it).
// Run by scripts/test-web-ui: node --test Tests/WebUI/
import test from "node:test";
import assert from "node:assert/strict";
import {useGrammar, isTransient, isAcknowledgement, commandTopic, requestTopic, responsePrefix, eventsTopic, browserPrefix, layoutTopic,
  actionSetTopic, attributeTopic, stateTopic} from "../../Sources/WebUI/Assets/topics.js";

const served = {
  levels: {request: "$request", response: "$response", sync: "$sync", events: "$events", layout: "$layout", browser: "$browser",
    state: "$state", health: "$health", actionSets: "$action-sets", groups: "$groups", zones: "$zones"},
  verbs: {set: "set", get: "get", execute: "execute"}, result: "result", shortcuts: ["$action-sets", "$groups", "$zones"],
  attributes: {meta: "$meta", reachable: "$reachable", lastSeen: "$last-seen", snapshot: "$snapshot", adaptiveLighting: "adaptive-lighting"},
};

test("without a grammar from the gateway, building a topic says what is missing", () => {
  assert.throws(() => requestTopic("homegate", "room", "add"), /no topic level "request"/);
});

test("topics are built from the served grammar", () => {
  useGrammar(served);
  assert.equal(commandTopic("homegate/h/r/lamp/lightbulb/on", "set"), "homegate/h/r/lamp/lightbulb/on/set");
  assert.equal(commandTopic("homegate/h/r/lamp/lightbulb/on", "get"), "homegate/h/r/lamp/lightbulb/on/get");
  assert.equal(requestTopic("homegate", "room", "add"), "homegate/$request/room/add");
  assert.equal(responsePrefix("homegate"), "homegate/$response/");
  assert.equal(eventsTopic("homegate"), "homegate/$events");
  assert.equal(browserPrefix("homegate"), "homegate/$browser/");
  assert.equal(layoutTopic("homegate"), "homegate/$layout");
  assert.equal(actionSetTopic("homegate/demo-home", "night"), "homegate/demo-home/$action-sets/night/execute");
  assert.equal(attributeTopic("homegate/h/r/lamp", "reachable"), "homegate/h/r/lamp/$reachable");
  assert.equal(attributeTopic("homegate/h/r/lamp", "lastSeen"), "homegate/h/r/lamp/$last-seen");
  assert.equal(stateTopic("homegate"), "homegate/$state");
  assert.throws(() => commandTopic("x", "toggle"), /no verb "toggle"/);
});

test("what is transient: verbs, acknowledgements, requests, answers, markers and events; state is not", () => {
  useGrammar(served);
  for (const topic of ["homegate/h/r/a/s/c/set", "homegate/h/r/a/s/c/get/result", "homegate/h/$action-sets/n/execute",
    "homegate/$request/room/add", "homegate/$response/room/add", "homegate/$sync/abc", "homegate/$events"]) {
    assert.ok(isTransient("homegate", topic), topic);
  }
  for (const topic of ["homegate/h/r/a/s/c", "homegate/h/r/a/$reachable", "homegate/$layout", "homegate/$browser/AA:BB", "homegate/$state",
    "homegate/h/r/a/s/settings"]) {
    assert.ok(!isTransient("homegate", topic), topic);
  }
  assert.ok(isAcknowledgement("homegate/h/r/a/s/c/set/result"));
  assert.ok(!isAcknowledgement("homegate/$response/room/add"));
});
