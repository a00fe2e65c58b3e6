// Category icons: small inline SVGs (24x24, stroked in the text colour), always shown beside the
// category's name in words. Categories are $meta's kebab-case names (lightbulb, door-lock, ...).

const PATHS = {
  lightbulb: "M9 18h6M10 21h4M12 3a6 6 0 0 0-3.5 10.9c.6.5 1 1.2 1 2V16h5v-.1c0-.8.4-1.5 1-2A6 6 0 0 0 12 3z",
  outlet: "M5 3h14v18H5zM9.5 8v3M14.5 8v3M10 16h4",
  switch: "M7 3h10v18H7zM12 7v5",
  sensor: "M10 4a2 2 0 0 1 4 0v10a4 4 0 1 1-4 0zM12 9v7",
  thermostat: "M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18zM12 7v5l3 2",
  "door-lock": "M6 11h12v10H6zM8.5 11V7a3.5 3.5 0 0 1 7 0v4M12 15v2",
  "garage-door-opener": "M3 10l9-6 9 6v11H3zM6 13h12M6 16h12M6 19h12",
  bridge: "M4 14h16v6H4zM8 14V9M16 14V9M12 14V4M7 17h.01M11 17h.01",
  fan: "M12 12c0-4 1-8 4-8s2 5-4 8zM12 12c4 0 8 1 8 4s-5 2-8-4zM12 12c0 4-1 8-4 8s-2-5 4-8zM12 12c-4 0-8-1-8-4s5-2 8 4z",
  "window-covering": "M4 3h16M5 3v13h14V3M5 8h14M5 12h14M12 16v4",
  door: "M6 3h12v18H6zM14.5 12h.01",
  window: "M4 4h16v16H4zM12 4v16M4 12h16",
  "security-system": "M12 3l8 3v6c0 5-3.5 8-8 9-4.5-1-8-4-8-9V6z",
  "programmable-switch": "M4 4h16v16H4zM12 9v6M9 12h6",
  television: "M3 5h18v12H3zM8 21h8",
  speaker: "M6 3h12v18H6zM12 15a2.5 2.5 0 1 0 0-.01M12 7h.01",
  "ip-camera": "M3 7h13v10H3zM16 11l5-3v8l-5-3",
  other: "M5 5h14v14H5zM9 12h6",
};

/** An <svg> for the category (the "other" shape for one without its own), hidden from screen readers. */
export function categoryIcon(category) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "28");
  svg.setAttribute("height", "28");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "icon");
  const path = document.createElementNS(ns, "path");
  path.setAttribute("d", PATHS[category] ?? PATHS[aliasOf(category)] ?? PATHS.other);
  svg.append(path);
  return svg;
}

function aliasOf(category) {
  const aliases = {
    "air-purifier": "fan", "air-conditioner": "thermostat", heater: "thermostat", humidifier: "fan",
    dehumidifier: "fan", "video-doorbell": "ip-camera", "range-extender": "bridge", router: "bridge",
    sprinkler: "sensor", faucet: "sensor", "shower-head": "sensor", "garage-door": "garage-door-opener",
    lock: "door-lock", "target-controller": "programmable-switch", "audio-receiver": "speaker",
  };
  return aliases[category];
}
