"use strict";
/*
 * Loads ORIGINAL HAP-NodeJS TypeScript sources straight out of the git mirror
 * (git show <rev>:<path>), transpiles each file with ts.transpileModule (no logic
 * edits), and compiles it into node's module system under a virtual path.
 *
 * Imports that are irrelevant to TLV decoding are redirected to small stubs in ./stubs.
 * Any other import from a virtual file that is not explicitly allowed throws, so
 * nothing is silently stubbed.
 *
 * Env:
 *   HAP_REPO  git dir of HAP-NodeJS (required)
 *   HAP_REV   revision to read from   (default HEAD)
 *   NODE_PATH is not needed: typescript is loaded from /usr/share/nodejs if not resolvable.
 */
const Module = require("module");
const path = require("path");
const { execFileSync } = require("child_process");

const HAP_REPO = process.env.HAP_REPO;
if (!HAP_REPO) {
  process.stderr.write("hap-loader: set HAP_REPO to a git clone of https://github.com/homebridge/HAP-NodeJS\n");
  process.exit(64);
}
const HAP_REV = process.env.HAP_REV || "HEAD";
const VROOT = "/__hap_nodejs_virtual__/"; // virtual filesystem root for transpiled modules

let ts;
try { ts = require("typescript"); } catch (e) { ts = require("/usr/share/nodejs/typescript"); }

function gitShow(relPath) {
  return execFileSync("git", ["-C", HAP_REPO, "show", `${HAP_REV}:${relPath}`], { encoding: "utf8", maxBuffer: 64 << 20 });
}
function gitRevParse() {
  return execFileSync("git", ["-C", HAP_REPO, "rev-parse", HAP_REV], { encoding: "utf8" }).trim();
}

const COMPILER_OPTIONS = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,     // same target as HAP-NodeJS's own tsconfig.json
  esModuleInterop: true,
  allowSyntheticDefaultImports: true,
  preserveConstEnums: true,           // HAP-NodeJS's tsconfig also sets this
  isolatedModules: false,             // (transpileModule forces per-file mode anyway; same-file const enums are still inlined)
  useUnknownInCatchVariables: false,
  sourceMap: false,
};

function transpile(source, fileName) {
  const out = ts.transpileModule(source, { compilerOptions: COMPILER_OPTIONS, fileName, reportDiagnostics: true });
  const errs = (out.diagnostics || []).filter(d => d.category === ts.DiagnosticCategory.Error);
  if (errs.length) {
    throw new Error("transpile errors in " + fileName + ": " + errs.map(d => ts.flattenDiagnosticMessageText(d.messageText, "\n")).join("; "));
  }
  return out.outputText;
}

// Original source files that are transpiled as-is (repo-relative, without .ts).
const ORIGINAL = new Set([
  "src/lib/controller/AdaptiveLightingController",
  "src/lib/util/tlv",
  "src/lib/util/time",
  "src/lib/util/uuid",
  "src/lib/util/hapCrypto",        // only writeUInt64LE is reached (via tlv.writeVariableUIntLE)
  "src/lib/util/hapStatusError",   // error class thrown on invalid iid / non-string value
  "src/lib/util/color-utils",      // only used by scheduleNextUpdate (not reached here); has no deps
]);

const STUB_DIR = path.join(__dirname, "stubs");
// Repo-relative modules replaced by stubs.
const STUB_RELATIVE = {
  "src/lib/HAPServer": "hapserver.js",          // HAPStatus + IsKnownHAPStatusError, extracted verbatim from HAPServer.ts
  "src/lib/Characteristic": "characteristic.js", // Characteristic.Brightness/ColorTemperature tokens, event/change enums
  "src/lib/definitions": "empty.js",             // only types are imported (elided by the transpiler)
  "src/lib/controller/Controller": "controller.js", // DefaultControllerType (controllerId() only)
  "src/types": "empty.js",                       // type-only import
  "src/lib/util/eventedhttp": "empty.js",        // type-only import from hapCrypto
};
// Bare (package) specifiers replaced by stubs.
const STUB_PACKAGES = {
  "debug": "debug.js",
  "futoin-hkdf": "empty-fn.js",   // hapCrypto: HKDF, not used by tlv
  "tweetnacl": "empty.js",        // hapCrypto: curve25519, not used by tlv
};
const NODE_BUILTINS = new Set(["assert", "events", "crypto", "util", "buffer"]);

const origResolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, isMain, options) {
  if (typeof request === "string" && request.startsWith(VROOT)) {
    const rel = request.slice(VROOT.length).replace(/\.ts$/, "");
    if (ORIGINAL.has(rel)) return VROOT + rel + ".ts";
    throw new Error("hap-loader: not an allowed original file: " + rel);
  }
  const fromVirtual = parent && typeof parent.filename === "string" && parent.filename.startsWith(VROOT);
  if (!fromVirtual) {
    return origResolve.call(this, request, parent, isMain, options);
  }
  if (request.startsWith(".")) {
    const parentRel = parent.filename.slice(VROOT.length).replace(/\.ts$/, "");
    const rel = path.posix.normalize(path.posix.join(path.posix.dirname(parentRel), request));
    if (ORIGINAL.has(rel)) return VROOT + rel + ".ts";
    if (STUB_RELATIVE[rel]) return path.join(STUB_DIR, STUB_RELATIVE[rel]);
    throw new Error(`hap-loader: unmapped relative import '${request}' (${rel}) from ${parentRel}`);
  }
  if (STUB_PACKAGES[request]) return path.join(STUB_DIR, STUB_PACKAGES[request]);
  if (NODE_BUILTINS.has(request) || request.startsWith("node:")) return origResolve.call(this, request, parent, isMain, options);
  throw new Error(`hap-loader: unmapped package import '${request}' from ${parent.filename}`);
};

const transpiledCache = new Map(); // rel -> js (exposed for inspection)
Module._extensions[".ts"] = function (module, filename) {
  if (!filename.startsWith(VROOT)) throw new Error("hap-loader: refusing to load non-virtual .ts " + filename);
  const rel = filename.slice(VROOT.length);
  const js = transpile(gitShow(rel), path.posix.basename(rel));
  transpiledCache.set(rel, js);
  module._compile(js, filename);
};

function loadOriginal(rel) {
  if (!ORIGINAL.has(rel)) throw new Error("not an allowed original: " + rel);
  return require(VROOT + rel + ".ts");
}

module.exports = { loadOriginal, gitShow, gitRevParse, transpile, transpiledCache, HAP_REPO, HAP_REV, VROOT };
