// @ts-check
// Torch Doctor training monitor: one uPlot chart per ChartSpec (extension/src/monitor/
// monitorView.ts). A spec's series become uPlot series on its x (steps); a series with a band
// adds two hidden series (min, max) filled between; the loss chart adds the smoothed line over
// a faint raw one and can switch to a log axis; stacked charts fill between running sums and
// their legend shows each part. Cursors are synced across charts: hovering one shows that
// step's values in every legend. Bundled with uPlot into dist/monitor/page.js by esbuild.
import uPlot from 'uplot';
import { positiveOnly, smooth } from '../../src/monitor/smoothing';
import { formatValue } from './format';

const HEIGHT = 170;
const SYNC_KEY = 'torchdoctor-monitor';
const PALETTE_VARS = [
  ['--vscode-charts-blue', '#3794ff'],
  ['--vscode-charts-orange', '#d18616'],
  ['--vscode-charts-green', '#89d185'],
  ['--vscode-charts-purple', '#b180d7'],
  ['--vscode-charts-red', '#f14c4c'],
  ['--vscode-charts-yellow', '#cca700'],
  ['--vscode-charts-foreground', '#cccccc'],
  ['--vscode-descriptionForeground', '#999999'],
];

/** @returns {string[]} */
function palette() {
  const style = getComputedStyle(document.body);
  return PALETTE_VARS.map(([v, fallback]) => style.getPropertyValue(v).trim() || fallback);
}

/**
 * @param {string} color
 * @param {number} alpha
 */
function faded(color, alpha) {
  const m = /^#([0-9a-f]{6})$/i.exec(color);
  if (!m) {
    return color;
  }
  const n = parseInt(m[1], 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

/**
 * The uPlot series, data arrays and bands of one spec, with the page's choices.
 * @param {any} spec
 * @param {{ log: boolean, smoothing: number }} choice
 */
export function layout(spec, choice) {
  const colors = palette();
  const log = spec.log || (spec.loss && choice.log);
  const fix = (/** @type {(number|null)[]} */ v) => (log ? positiveOnly(v) : v);
  const fmt = (/** @type {number | null} */ v) => formatValue(v, spec.unit);
  /** @type {any[]} */
  const series = [{ label: 'step', value: (/** @type {any} */ _u, /** @type {number} */ v) => (v === null ? '–' : String(v)) }];
  /** @type {(number|null)[][]} */
  const data = [spec.x];
  /** @type {any[]} */
  const bands = [];
  /** @type {number[]} */
  const hidden = [];
  const add = (/** @type {any} */ s, /** @type {(number|null)[]} */ values, legend = true) => {
    series.push(s);
    data.push(values);
    if (!legend) {
      hidden.push(series.length - 1);
    }
    return series.length - 1;
  };
  spec.series.forEach((/** @type {any} */ s, /** @type {number} */ i) => {
    const color = colors[s.color % colors.length];
    const smoothed = spec.loss && choice.smoothing > 0 && s.style === 'line';
    if (s.lo && s.hi) {
      const hi = add({ label: `${s.label} max`, stroke: 'transparent', points: { show: false } }, fix(s.hi), false);
      const lo = add({ label: `${s.label} min`, stroke: 'transparent', points: { show: false } }, fix(s.lo), false);
      bands.push({ series: [hi, lo], fill: faded(color, 0.15) });
    }
    if (spec.stacked) {
      const part = s.part;
      const me = add(
        { label: s.label, stroke: color, width: 1, fill: faded(color, 0.45), value: (/** @type {any} */ _u, /** @type {any} */ _v, /** @type {number} */ _si, /** @type {number} */ idx) => (idx === null ? '–' : fmt(part[idx])) },
        s.values,
      );
      if (i > 0) {
        bands.push({ series: [me, me - 1], fill: faded(color, 0.45) });
        series[me].fill = undefined;
      }
      return;
    }
    // a line through one value draws nothing: a run of one step (one backward() to inspect) shows a dot
    const lone = s.values.filter((/** @type {number|null} */ v) => v !== null && v !== undefined).length === 1;
    const points = s.style === 'points' || lone ? { show: true, size: 6, fill: color } : { show: false };
    const raw = add(
      {
        label: smoothed ? `${s.label} (raw)` : s.label,
        stroke: smoothed ? faded(color, 0.35) : color,
        width: s.style === 'points' ? 1 : 1.5,
        dash: s.style === 'dashed' ? [6, 4] : undefined,
        points,
        spanGaps: true,
        value: (/** @type {any} */ _u, /** @type {number|null} */ v) => fmt(v),
      },
      fix(s.values),
    );
    if (smoothed) {
      add({ label: s.label, stroke: color, width: 2, spanGaps: true, points: { show: false }, value: (/** @type {any} */ _u, /** @type {number|null} */ v) => fmt(v) }, smooth(data[raw], choice.smoothing));
    }
  });
  return { series, data, bands, hidden, log };
}

/**
 * A new uPlot in `host`.
 * @param {HTMLElement} host
 * @param {any} spec
 * @param {{ log: boolean, smoothing: number }} choice
 * @param {number} width
 */
export function createChart(host, spec, choice, width) {
  const l = layout(spec, choice);
  const axisColor = palette()[7];
  const axis = (/** @type {boolean} */ isY) => ({
    stroke: axisColor,
    grid: { stroke: faded(axisColor, 0.15), width: 1 },
    ticks: { stroke: faded(axisColor, 0.3), width: 1 },
    ...(isY ? { size: 64, values: (/** @type {any} */ _u, /** @type {number[]} */ ticks) => ticks.map((t) => formatValue(t, spec.unit)) } : {}),
  });
  /** @type {any} */
  const opts = {
    width,
    height: HEIGHT,
    series: l.series,
    bands: l.bands,
    scales: { x: { time: false }, y: l.log ? { distr: 3 } : {} },
    axes: [axis(false), axis(true)],
    cursor: { sync: { key: SYNC_KEY }, points: { size: 6 } },
    legend: { live: true },
  };
  const u = new uPlot(opts, /** @type {any} */ (l.data), host);
  for (const i of l.hidden) {
    const row = u.root.querySelectorAll('.u-legend .u-series')[i];
    if (row instanceof HTMLElement) {
      row.classList.add('td-hidden');
    }
  }
  return { u, signature: signature(spec, choice, l) };
}

/**
 * What forces a new chart instead of new data: the series, the axis, the smoothing on/off.
 * @param {any} spec
 * @param {{ log: boolean, smoothing: number }} choice
 * @param {{ log: boolean, series: any[] }} l
 */
export function signature(spec, choice, l) {
  return JSON.stringify([spec.id, l.log, spec.loss ? choice.smoothing : 0, l.series.map((s) => s.label)]);
}

/**
 * Same chart, new numbers.
 * @param {any} chart { u, signature }
 * @param {any} spec
 * @param {{ log: boolean, smoothing: number }} choice
 * @returns {boolean} false when the chart must be made anew
 */
export function updateChart(chart, spec, choice) {
  const l = layout(spec, choice);
  if (signature(spec, choice, l) !== chart.signature) {
    return false;
  }
  chart.u.setData(l.data);
  return true;
}
