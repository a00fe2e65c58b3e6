"use strict";
// ../Characteristic stub. The decoding path never touches these; they are used by
// the constructor (testCharacteristic tokens), handleSupportedTransitionConfigurationRead
// (getCharacteristic(Characteristic.Brightness / ColorTemperature)) and the scheduling code.
// The tokens are plain unique objects; the harness's stub Lightbulb maps them to iids.
function token(name) { return { displayName: name, UUID: "stub-" + name }; }
exports.Characteristic = {
  Brightness: token("Brightness"),
  ColorTemperature: token("ColorTemperature"),
  Hue: token("Hue"),
  Saturation: token("Saturation"),
  SupportedCharacteristicValueTransitionConfiguration: token("SupportedCharacteristicValueTransitionConfiguration"),
  CharacteristicValueTransitionControl: token("CharacteristicValueTransitionControl"),
  CharacteristicValueActiveTransitionCount: token("CharacteristicValueActiveTransitionCount"),
};
// string values copied from src/lib/Characteristic.ts
exports.ChangeReason = { WRITE: "write", UPDATE: "update", READ: "read", EVENT: "event" };
exports.CharacteristicEventTypes = { GET: "get", SET: "set", CHANGE: "change", SUBSCRIBE: "subscribe", UNSUBSCRIBE: "unsubscribe" };
