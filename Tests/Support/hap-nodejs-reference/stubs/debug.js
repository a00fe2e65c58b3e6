"use strict";
// 'debug' stub: createDebug(ns) returns a logger. Silent unless AL_DEBUG=1 (then prints to stderr).
const util = require("util");
function createDebug(ns) {
  return function (...args) {
    if (process.env.AL_DEBUG) process.stderr.write(ns + " " + util.format(...args) + "\n");
  };
}
module.exports = createDebug;
module.exports.default = createDebug;
