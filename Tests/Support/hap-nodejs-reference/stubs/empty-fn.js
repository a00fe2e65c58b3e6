"use strict";
// futoin-hkdf stub: hapCrypto.HKDF is never called by tlv/AdaptiveLightingController.
module.exports = function hkdfStub() { throw new Error("futoin-hkdf stub: not available in al-reference harness"); };
module.exports.default = module.exports;
