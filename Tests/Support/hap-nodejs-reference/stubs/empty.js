"use strict";
// Stub for modules from which only TypeScript types are imported (the transpiler elides such imports),
// or whose exports are never reached by the decoding code.
module.exports = {};
