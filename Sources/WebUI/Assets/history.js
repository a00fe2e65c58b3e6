// History charts, drawn as the page's own SVG: a line for numbers, state bands for booleans and
// enumerations, a sparkline on sensor tiles. The points come from the gateway's history
// (`<base>/$request/history/get` {"characteristic", "from", "to", "limit"?}, answered with
// {"characteristic", "from", "to", "points": [[unix ms, value], ...], "truncated"}).
// The geometry (the first half) is pure and checked by Tests/WebUI/history_test.mjs under node.

const SVG = "http://www.w3.org/2000/svg";

/** Whether the points are drawn as a line: every value a number (booleans and enumerations,
 *  whose characteristic has valid values, are bands). */
export function isLine(points, {enumerated = false} = {}) {
  if (enumerated) return false;
  return points.length > 0 && points.every(([, value]) => typeof value === "number" && Number.isFinite(value));
}

/** The value range a line is drawn in: the points' lowest and highest, padded by a tenth of the
 *  span (a flat line gets one unit either side). */
export function valueRange(points) {
  const values = points.map(([, value]) => value);
  let low = Math.min(...values), high = Math.max(...values);
  if (!Number.isFinite(low)) return [0, 1];
  if (low === high) return [low - 1, high + 1];
  const pad = (high - low) / 10;
  return [low - pad, high + pad];
}

/** x of a time and y of a value in a box of `width` x `height` (y grows downwards). */
export function scales({from, to, width, height, low, high}) {
  const span = Math.max(1, to - from);
  return {
    x: (time) => round(((Math.min(Math.max(time, from), to) - from) / span) * width),
    y: (value) => round(height - ((value - low) / (high - low || 1)) * height),
  };
}

/** The SVG path of a step line: each value holds until the next point (a characteristic keeps
 *  its value until it changes), the last one until `to`. A point before `from` starts the line
 *  at `from`. Empty points: "". */
export function linePath(points, {from, to, width, height, low, high}) {
  const inRange = points.filter(([time]) => time <= to);
  if (inRange.length === 0) return "";
  const {x, y} = scales({from, to, width, height, low, high});
  const parts = [];
  inRange.forEach(([time, value], index) => {
    if (index === 0) parts.push(`M${x(time)} ${y(value)}`);
    else parts.push(`H${x(time)}`, `V${y(value)}`);
  });
  parts.push(`H${x(to)}`);
  return parts.join(" ");
}

/** The bands of a boolean or enumerated characteristic: [{x, width, value}], each value from its
 *  time until the next point's (the last until `to`); bands outside [from, to] are dropped. */
export function stateBands(points, {from, to, width}) {
  const {x} = scales({from, to, width, height: 1, low: 0, high: 1});
  const bands = [];
  points.forEach(([time, value], index) => {
    const end = index + 1 < points.length ? points[index + 1][0] : to;
    if (end < from || time > to) return;
    const left = x(time), right = x(end);
    if (right <= left) return;
    bands.push({x: left, width: round(right - left), value});
  });
  return bands;
}

/** The points to draw from a history/get answer's data: `previous` (the value the range starts
 *  with, before `from`) first when there is one, then `points`. */
export function seriesOf(data) {
  const points = Array.isArray(data?.points) ? data.points : [];
  const previous = Array.isArray(data?.previous) ? data.previous : null;
  return previous && (!points.length || previous[0] < points[0][0]) ? [previous, ...points] : points;
}

/** Where a chart of the last `from`..`to` starts: at `from`, or, when every point is younger,
 *  a tenth of the points' span (at least 0.2 s) before the first point: a history that began
 *  minutes ago fills the chart instead of a sliver at its right edge. */
export function chartStart(points, from, to) {
  if (!points.length || points[0][0] <= from) return from;
  const first = points[0][0];
  return Math.max(from, first - Math.max(200, (to - first) / 10));
}

/** Adds a value seen live (a retained update) to points fetched earlier, in time order, without
 *  repeating the last value. */
export function withLiveValue(points, time, value) {
  const last = points.at(-1);
  if (last && (last[1] === value || last[0] > time)) return points;
  return [...points, [time, value]];
}

function round(number) {
  return Math.round(number * 10) / 10;
}

// The DOM -----------------------------------------------------------------------------------------

function svgElement(tag, attributes = {}) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  return element;
}

/** Band colour classes: a boolean true/false, else one of six by the value's order of appearance. */
function bandClass(value, order) {
  if (value === true || value === 1 && order.size <= 2) return "band-on";
  if (value === false || value === 0 && order.size <= 2) return "band-off";
  if (!order.has(value)) order.set(value, order.size);
  return `band-${order.get(value) % 6}`;
}

/** A chart: a line (with its lowest and highest value written) or state bands (each labelled),
 *  with the times of its ends. `describe(value)` words a value ("21.5 °C", "On"). */
export function chartSvg(points, {from, to, enumerated = false, describe = String, title = "History"}) {
  const width = 600, height = 140, top = 8, bottom = 22;
  const svg = svgElement("svg", {viewBox: `0 0 ${width} ${height + top + bottom}`, class: "chart", role: "img", "aria-label": title});
  svg.dataset.testid = "history-chart";
  svg.dataset.points = String(points.length);
  const plot = svgElement("g", {transform: `translate(0 ${top})`});
  svg.append(plot);
  plot.append(svgElement("rect", {x: 0, y: 0, width, height, class: "chart-frame"}));
  if (isLine(points, {enumerated})) {
    const [low, high] = valueRange(points);
    svg.dataset.kind = "line";
    plot.append(svgElement("path", {d: linePath(points, {from, to, width, height, low, high}), class: "chart-line"}));
    const values = points.map(([, value]) => value);
    const label = (text, y) => { const element = svgElement("text", {x: 4, y, class: "chart-label"}); element.textContent = text; plot.append(element); };
    label(`max ${describe(Math.max(...values))}`, 14);
    label(`min ${describe(Math.min(...values))}`, height - 6);
  } else {
    svg.dataset.kind = "bands";
    const order = new Map();
    for (const band of stateBands(points, {from, to, width})) {
      const rect = svgElement("rect", {x: band.x, y: 0, width: band.width, height, class: `chart-band ${bandClass(band.value, order)}`});
      const tip = svgElement("title");
      tip.textContent = describe(band.value);
      rect.append(tip);
      plot.append(rect);
      if (band.width > 40) {
        const text = svgElement("text", {x: band.x + 4, y: height / 2 + 5, class: "chart-label"});
        text.textContent = describe(band.value);
        plot.append(text);
      }
    }
  }
  const time = (words, x, anchor) => {
    const text = svgElement("text", {x, y: height + top + 16, class: "chart-time", "text-anchor": anchor});
    text.textContent = words;
    svg.append(text);
  };
  const short = to - from < 3_600_000;
  time(new Date(from).toLocaleTimeString([], {hour: "2-digit", minute: "2-digit", ...(short ? {second: "2-digit"} : {})}), 2, "start");
  time("now", width - 2, "end");
  return svg;
}

/** A sparkline for a tile: the line only, no labels (hidden from screen readers: the tile says
 *  the value in words). */
export function sparklineSvg(points, {from, to}) {
  const width = 120, height = 28;
  const svg = svgElement("svg", {viewBox: `0 0 ${width} ${height}`, class: "sparkline", "aria-hidden": "true"});
  svg.dataset.testid = "sparkline";
  svg.dataset.points = String(points.length);
  if (isLine(points)) {
    const [low, high] = valueRange(points);
    svg.append(svgElement("path", {d: linePath(points, {from, to, width, height, low, high}), class: "chart-line"}));
  }
  return svg;
}

// Fetching ----------------------------------------------------------------------------------------

const cache = new Map(); // topic -> {at, from, to, answer promise}
const CACHE_MS = 60_000;

/** The history of `topic` over the last `hours` hours: {points (with the value the range starts
 *  with), from, to, truncated} or {error, message} (history-off, no-answer when the gateway has
 *  none). Answers (refusals too) younger than `maxAgeMs` are reused: the tiles' sparklines keep
 *  theirs a minute across re-renders; a detail that opens asks anew. */
export async function fetchHistory(commands, topic, {hours = 24, maxAgeMs = CACHE_MS} = {}) {
  const now = Date.now();
  const kept = cache.get(topic);
  if (kept && now - kept.at < maxAgeMs && kept.hours === hours) return kept.answer;
  const from = now - hours * 3_600_000;
  const answer = commands.request("history", "get", {characteristic: topic, from, to: now}, 15000)
    .then((reply) => reply.ok && Array.isArray(reply.data?.points)
      ? {points: seriesOf(reply.data), from, to: now, truncated: reply.data.truncated === true}
      : {error: reply.error ?? "failed", message: reply.message ?? ""})
    .catch((error) => ({error: error.code ?? "failed", message: error.message}));
  cache.set(topic, {at: now, hours, answer}); // a refusal too: asked again after a minute, not at every re-render
  return answer;
}

/** Forgets every fetched history (another user signs in). */
export function forgetHistory() {
  cache.clear();
}
