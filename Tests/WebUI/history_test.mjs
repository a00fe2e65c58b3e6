// The history charts' geometry (Sources/WebUI/Assets/history.js) against the gateway's
// history/get contract: points [[unix ms, value], ...] between "from" and "to".
// Run by scripts/test-web-ui: node --test Tests/WebUI/
import test from "node:test";
import assert from "node:assert/strict";
import {isLine, valueRange, linePath, stateBands, withLiveValue, scales, seriesOf, chartStart} from "../../Sources/WebUI/Assets/history.js";

const from = 1_700_000_000_000;
const hour = 3_600_000;
const to = from + 24 * hour;
const box = {from, to, width: 240, height: 100};

test("numbers are a line; booleans, strings and enumerations are bands", () => {
  assert.equal(isLine([[from, 20.5], [from + hour, 21]]), true);
  assert.equal(isLine([[from, true], [from + hour, false]]), false);
  assert.equal(isLine([[from, 1], [from + hour, 0]], {enumerated: true}), false);
  assert.equal(isLine([]), false);
});

test("the value range pads the span by a tenth, a flat line by one unit", () => {
  assert.deepEqual(valueRange([[from, 10], [from + hour, 20]]), [9, 21]);
  assert.deepEqual(valueRange([[from, 21.5]]), [20.5, 22.5]);
});

test("a step line: each value holds until the next point, the last until `to`", () => {
  const points = [[from, 10], [from + 6 * hour, 20], [from + 12 * hour, 15]];
  const d = linePath(points, {...box, low: 10, high: 20});
  // x: 10 px per hour; y: 100 at 10, 0 at 20, 50 at 15.
  assert.equal(d, "M0 100 H60 V0 H120 V50 H240");
});

test("a point before `from` starts the line at the left edge; points after `to` are left out", () => {
  const points = [[from - 5 * hour, 12], [from + 12 * hour, 14], [to + hour, 99]];
  assert.equal(linePath(points, {...box, low: 10, high: 20}), "M0 80 H120 V60 H240");
  assert.equal(linePath([], {...box, low: 0, high: 1}), "");
});

test("bands: one per value, from its time to the next, clipped to the range", () => {
  const points = [[from - hour, false], [from + 6 * hour, true], [from + 18 * hour, false]];
  assert.deepEqual(stateBands(points, box), [
    {x: 0, width: 60, value: false},
    {x: 60, width: 120, value: true},
    {x: 180, width: 60, value: false},
  ]);
  // A band wholly before the range is dropped.
  assert.deepEqual(stateBands([[from - 3 * hour, 1], [from - 2 * hour, 2], [from + 12 * hour, 3]], box),
    [{x: 0, width: 120, value: 2}, {x: 120, width: 120, value: 3}]);
});

test("scales clamp times to the range", () => {
  const {x, y} = scales({...box, low: 0, high: 10});
  assert.equal(x(from - hour), 0);
  assert.equal(x(to + hour), 240);
  assert.equal(y(5), 50);
});

test("a live value is added once, in time order", () => {
  const points = [[from, 1]];
  assert.deepEqual(withLiveValue(points, from + hour, 2), [[from, 1], [from + hour, 2]]);
  assert.equal(withLiveValue(points, from + hour, 1), points);
  assert.equal(withLiveValue(points, from - hour, 3), points);
});

test("an answer's `previous` point starts the series, so the line starts at `from` with it", () => {
  const data = {characteristic: "homegate/x/brightness", from, to, points: [[from + hour, 55]], previous: [from - hour, 40], truncated: false};
  assert.deepEqual(seriesOf(data), [[from - hour, 40], [from + hour, 55]]);
  assert.equal(linePath(seriesOf(data), {...box, low: 40, high: 55}), "M0 100 H10 V0 H240");
  assert.deepEqual(seriesOf({...data, previous: null}), [[from + hour, 55]]);
  assert.deepEqual(seriesOf({points: [], previous: [from - hour, true]}), [[from - hour, true]]);
  assert.deepEqual(seriesOf({}), []);
});

test("a history younger than the range fills the chart: from a tenth of its span (0.2 s at least) before its first point", () => {
  assert.equal(chartStart([[from - hour, 1], [to - hour, 2]], from, to), from);
  assert.equal(chartStart([[to - 2 * hour, 1]], from, to), to - 2 * hour - 12 * 60_000);
  assert.equal(chartStart([[to - 5_000, 1]], from, to), to - 5_500);
  assert.equal(chartStart([[to - 1_000, 1]], from, to), to - 1_200);
  assert.equal(chartStart([[from + 1000, 1]], from, to), from);
  assert.equal(chartStart([], from, to), from);
});
