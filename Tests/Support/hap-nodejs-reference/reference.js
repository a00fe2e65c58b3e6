#!/usr/bin/env node
"use strict";
/*
 * Reference decoder: runs HAP-NodeJS's ORIGINAL AdaptiveLightingController code
 * (transpiled from git at run time, see hap-loader.js) on test vectors.
 *
 *   node reference.js <vectors.json>
 *       vectors.json = [{"name": "...", "write": "<base64>", "then": ["<base64>", ...]?}, ...]
 *       prints [{"name", "response", "disabled", "transitionUpdated", "activeTransition"} | {"name", "error"}, ...]
 *   node reference.js --supported <brightnessIID> <temperatureIID>
 *       prints the base64 returned by handleSupportedTransitionConfigurationRead()
 *
 * Each vector gets a FRESH controller instance (AUTOMATIC mode, no active transition).
 */
const fs = require("fs");
const { loadOriginal, gitRevParse, HAP_REPO } = require("./hap-loader");
const { AdaptiveLightingController } = loadOriginal("src/lib/controller/AdaptiveLightingController");
const { Characteristic } = require("./stubs/characteristic");

const proto = AdaptiveLightingController.prototype;

function makeLightbulb(iids) {
  const chars = new Map([
    [Characteristic.Brightness, { iid: iids.brightness, displayName: "Brightness", value: 100, props: {} }],
    [Characteristic.ColorTemperature, { iid: iids.temperature, displayName: "Color Temperature", value: 140, props: {} }],
  ]);
  return {
    displayName: "al-reference stub lightbulb",
    // any iid is accepted (HAP-NodeJS only checks truthiness of the result)
    getCharacteristicByIID: (iid) => ({ iid, stub: true }),
    testCharacteristic: (c) => chars.has(c),
    getCharacteristic: (c) => {
      if (!chars.has(c)) throw new Error("stub lightbulb: unexpected getCharacteristic(" + (c && c.displayName) + ")");
      return chars.get(c);
    },
    getServiceId: () => "stub-lightbulb",
  };
}

function makeController(record, iids = { brightness: 1, temperature: 2 }) {
  const ctl = new AdaptiveLightingController(makeLightbulb(iids)); // real constructor, AUTOMATIC mode
  // Record (then run the original, which only resets in-memory state) when HAP-NodeJS considers AL disabled.
  ctl.handleAdaptiveLightingDisabled = function () {
    record.disabled = true;
    return proto.handleAdaptiveLightingDisabled.call(this);
  };
  // Record only: the original would start the AUTOMATIC-mode timer loop (setTimeout + ColorTemperature writes).
  ctl.handleActiveTransitionUpdated = function () {
    record.transitionUpdated = true;
  };
  return ctl;
}

function snapshotTransition(t) {
  if (!t) return null;
  // eslint-disable-next-line no-unused-vars
  const { timeMillisOffset, ...rest } = t; // depends on Date.now(): dropped
  return JSON.parse(JSON.stringify(rest)); // undefined fields (id3, duration) are omitted, as JSON.stringify does
}

function errorObject(name, e) {
  const o = { name, error: (e && e.message) || String(e) };
  if (e && e.hapStatus !== undefined) o.hapStatus = e.hapStatus;
  return o;
}

function runVector(v) {
  const record = { disabled: false, transitionUpdated: false };
  const ctl = makeController(record);
  let response;
  try {
    response = proto.handleTransitionControlWrite.call(ctl, v.write);
  } catch (e) {
    return errorObject(v.name, e);
  }
  const out = { name: v.name, response, disabled: record.disabled, transitionUpdated: record.transitionUpdated };
  if (Array.isArray(v.then)) { // optional follow-up writes on the SAME controller instance
    out.then = v.then.map((w) => {
      try { return { response: proto.handleTransitionControlWrite.call(ctl, w) }; } catch (e) { return errorObject(undefined, e); }
    });
    out.disabled = record.disabled;
    out.transitionUpdated = record.transitionUpdated;
  }
  out.activeTransition = snapshotTransition(ctl.activeTransition);
  return out;
}

function main(argv) {
  process.stderr.write(`al-reference: HAP-NodeJS ${HAP_REPO} @ ${gitRevParse()}\n`);
  if (argv[0] === "--supported") {
    const b = Number(argv[1]), t = Number(argv[2]);
    if (!Number.isInteger(b) || !Number.isInteger(t)) throw new Error("usage: --supported <brightnessIID> <temperatureIID>");
    const ctl = makeController({}, { brightness: b, temperature: t });
    process.stdout.write(proto.handleSupportedTransitionConfigurationRead.call(ctl) + "\n");
    return;
  }
  if (argv.length !== 1) {
    process.stderr.write("usage: node reference.js <vectors.json> | --supported <brightnessIID> <temperatureIID>\n");
    process.exit(2);
  }
  const vectors = JSON.parse(fs.readFileSync(argv[0], "utf8"));
  if (!Array.isArray(vectors)) throw new Error("vectors file must contain a JSON array");
  const results = vectors.map(runVector);
  process.stdout.write(JSON.stringify(results, null, 2) + "\n");
}

main(process.argv.slice(2));
