"use strict";
// ../HAPServer stub. HAPServer.ts pulls in the whole HTTP/pairing server, so instead we
// extract, VERBATIM, the two things hapStatusError.ts / AdaptiveLightingController.ts need
// (`export const enum HAPStatus {...}` and `export function IsKnownHAPStatusError(...) {...}`)
// from the original HAPServer.ts in git and transpile just those (preserveConstEnums emits the enum object).
const { gitShow, transpile } = require("../hap-loader");
const src = gitShow("src/lib/HAPServer.ts");

function extractBlock(startRe) {
  const m = startRe.exec(src);
  if (!m) throw new Error("hapserver stub: could not find " + startRe);
  let i = src.indexOf("{", m.index);
  let depth = 0;
  for (let j = i; j < src.length; j++) {
    if (src[j] === "{") depth++;
    else if (src[j] === "}" && --depth === 0) return src.slice(m.index, j + 1);
  }
  throw new Error("hapserver stub: unbalanced block for " + startRe);
}
const code = extractBlock(/export const enum HAPStatus\b/) + "\n" + extractBlock(/export function IsKnownHAPStatusError\b/) + "\n";
const js = transpile(code, "HAPServer-extract.ts");
const m = { exports: {} };
new Function("exports", "module", "require", js)(m.exports, m, require);
module.exports = m.exports;
