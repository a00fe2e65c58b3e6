"use strict";
// ./Controller stub: only DefaultControllerType is used at runtime (in controllerId(), not reached by decoding).
// Value copied from src/lib/controller/Controller.ts.
exports.DefaultControllerType = { CHARACTERISTIC_TRANSITION: "characteristic-transition" };
