// @ts-check
// Torch Doctor: the "Training" page. Draws the MonitorView the extension posts
// (`{type: "render", view}`, extension/src/monitor/monitorView.ts): the run's header (name, state,
// script, start and end time, steps, dropped points), the controls (log scale and smoothing of
// the loss, Export CSV, and for a torchrun job of several ranks the rank picker), the verdict
// cards with a link to their line, the slowest-rank sentence, and the charts (charts.js, uPlot).
// The picker asks the extension for another rank (`{type: "rank"}`); the extension answers with
// that rank's view, so cards, charts and Export CSV all follow the picked rank. Every string goes in with textContent. Tells the extension how long each
// render took (`rendered`) and keeps it in <body data-render-ms> for the E2E test.
import 'uplot/dist/uPlot.min.css';
import './monitor.css';
import { createChart, updateChart } from './charts';
import { baseName, clock, kindTitle } from './format';

const vscode = acquireVsCodeApi();
/** @type {{ log: boolean, smoothing: number, rank: number | null }} */
const choice = Object.assign({ log: false, smoothing: 0.6, rank: null }, vscode.getState() || {});
/** @type {Map<string, { u: any, signature: string, box: HTMLElement }>} */
const charts = new Map();
/** @type {any} */
let current = null;

/**
 * @param {string} tag
 * @param {Record<string, string>} [attrs]
 * @param {(Node | string | null)[]} [children]
 */
function h(tag, attrs, children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    el.setAttribute(k, v);
  }
  for (const c of children || []) {
    if (c !== null) {
      el.append(c);
    }
  }
  return el;
}

const app = /** @type {HTMLElement} */ (document.getElementById('app'));
const header = h('header', { class: 'td-header' });
const controls = h('div', { class: 'td-controls' });
const cards = h('section', { class: 'td-cards', 'aria-label': 'Verdicts' });
const slowest = h('p', { class: 'td-slowest', id: 'td-slowest', hidden: '' });
const grid = h('section', { class: 'td-charts', 'aria-label': 'Charts' });
const rankSelect = /** @type {HTMLSelectElement} */ (h('select', { id: 'td-rank', 'aria-label': 'Rank shown' }));
const rankPicker = h('label', { for: 'td-rank', class: 'td-rank', hidden: '' }, ['Rank ', rankSelect]);
rankSelect.addEventListener('change', () => {
  const rank = Number(rankSelect.value);
  Object.assign(choice, { rank });
  vscode.setState(choice);
  vscode.postMessage({ type: 'rank', rank });
});
app.append(header, controls, cards, slowest, grid);
app.classList.add('td-monitor');
header.append(h('p', { class: 'td-empty' }, ['No training run yet: debug a training script with the torchdoctor debugger.']));

/** @param {any} view */
function stateText(view) {
  const r = view.run;
  if (r.state === 'paused') {
    return `Paused at step ${view.lastStep ?? '?'}`;
  }
  if (r.state === 'ended') {
    return `Ended ${r.ended ? clock(r.ended) : ''}`;
  }
  return r.state === 'waiting' ? 'Waiting for the first step' : 'Running';
}

/** @param {any} view */
function drawHeader(view) {
  const r = view.run;
  const facts = [
    `${view.steps} ${view.steps === 1 ? 'step' : 'steps'}`,
    view.lastStep !== null ? `last step ${view.lastStep}` : null,
    `started ${clock(r.started)}`,
    r.pid ? `pid ${r.pid}` : null,
    view.bucketWidth > 1 ? `older steps in buckets of ${view.bucketWidth}` : null,
    view.dropped ? `${view.dropped} points dropped by the recorder (the view was slow or gone)` : null,
  ].filter((x) => x !== null);
  header.dataset.steps = String(view.steps);
  header.dataset.lastStep = String(view.lastStep ?? '');
  header.replaceChildren(
    h('div', { class: 'td-title' }, [
      h('span', { class: 'td-name' }, [r.name]),
      h('span', { class: `td-state td-state-${r.state}`, 'data-state': r.state }, [stateText(view)]),
    ]),
    h('div', { class: 'td-facts' }, [r.script ? h('span', { title: r.script }, [baseName(r.script)]) : null, ...facts.map((f) => h('span', {}, [String(f)]))]),
  );
}

function drawControls() {
  const log = /** @type {HTMLInputElement} */ (h('input', { type: 'checkbox', id: 'td-log' }));
  log.checked = choice.log;
  log.addEventListener('change', () => setChoice({ log: log.checked }));
  const slider = /** @type {HTMLInputElement} */ (h('input', { type: 'range', id: 'td-smooth', min: '0', max: '0.99', step: '0.01' }));
  slider.value = String(choice.smoothing);
  const shown = h('span', { class: 'td-smooth-value' }, [choice.smoothing.toFixed(2)]);
  slider.addEventListener('input', () => {
    shown.textContent = Number(slider.value).toFixed(2);
    setChoice({ smoothing: Number(slider.value) });
  });
  const csv = h('button', { class: 'btn', id: 'td-export', type: 'button' }, ['Export CSV']);
  csv.addEventListener('click', () => vscode.postMessage({ type: 'exportCsv' }));
  controls.replaceChildren(
    rankPicker,
    h('label', { for: 'td-log' }, [log, ' Loss on a log scale']),
    h('label', { for: 'td-smooth' }, ['Smoothing ', slider, shown]),
    csv,
  );
}

/**
 * The rank picker and the slowest-rank sentence: shown only for a job of several ranks. The
 * options are rebuilt only when the ranks change, so a redraw never closes an open list.
 * @param {any} view
 */
function drawRanks(view) {
  const ranks = view.ranks;
  rankPicker.hidden = !ranks;
  slowest.hidden = !ranks?.stragglers;
  if (!ranks) {
    return;
  }
  const options = ranks.list.map((/** @type {number} */ r) => String(r));
  if ([...rankSelect.options].map((o) => o.value).join() !== options.join()) {
    rankSelect.replaceChildren(...options.map((r) => h('option', { value: r }, [`rank ${r}`])));
  }
  rankSelect.value = String(ranks.shown);
  slowest.textContent = ranks.stragglers?.sentence ?? '';
  if (ranks.stragglers) {
    slowest.dataset.rank = String(ranks.stragglers.rank);
    slowest.classList.toggle('td-quiet', !ranks.stragglers.named);
  }
}

/** @param {Partial<typeof choice>} c */
function setChoice(c) {
  Object.assign(choice, c);
  vscode.setState(choice);
  if (current) {
    drawCharts(current);
  }
}

/** @param {any} f */
function card(f) {
  const where = f.where
    ? h('button', { class: 'link td-where', type: 'button', title: f.where.path }, [`${baseName(f.where.path)}:${f.where.line}`])
    : null;
  where?.addEventListener('click', () => vscode.postMessage({ type: 'open', path: f.where.path, line: f.where.line }));
  return h('article', { class: `td-card td-${f.severity}`, 'data-kind': f.kind }, [
    h('div', { class: 'td-card-head' }, [
      h('span', { class: 'td-kind' }, [kindTitle(f.kind)]),
      f.step !== null ? h('span', { class: 'td-step' }, [`step ${f.step}`]) : null,
      where,
    ]),
    h('p', { class: 'td-sentence' }, [f.sentence]),
  ]);
}

/** @param {any} view */
function drawCards(view) {
  cards.replaceChildren(...view.findings.map(card));
}

/** @param {any} view */
function drawCharts(view) {
  const width = Math.max(260, Math.floor(grid.clientWidth || app.clientWidth || 600) - 8);
  const seen = new Set();
  let points = 0;
  for (const spec of view.charts) {
    seen.add(spec.id);
    points += spec.x.length * spec.series.length;
    const old = charts.get(spec.id);
    if (old) {
      old.box.dataset.points = String(spec.x.length);
    }
    if (old && updateChart(old, spec, choice)) {
      continue;
    }
    old?.u.destroy();
    const box = old?.box ?? h('div', { class: 'td-chart', 'data-chart': spec.id }, [h('h3', {}, [spec.title])]);
    if (!old) {
      grid.append(box);
    }
    box.dataset.points = String(spec.x.length);
    const made = createChart(box, spec, choice, width);
    charts.set(spec.id, { ...made, box });
  }
  for (const [id, c] of charts) {
    if (!seen.has(id)) {
      c.u.destroy();
      c.box.remove();
      charts.delete(id);
    }
  }
  // A chart that came later (the cross-rank step time, once two ranks reported) goes to its
  // place in the view's order, not to the end; boxes move only when the order differs.
  const order = view.charts.map((/** @type {any} */ spec) => charts.get(spec.id)?.box);
  if (order.some((/** @type {any} */ box, /** @type {number} */ i) => grid.children[i] !== box)) {
    grid.append(...order.filter((/** @type {any} */ b) => b));
  }
  return points;
}

/** @param {any} view */
function render(view) {
  const t0 = performance.now();
  current = view;
  drawHeader(view);
  drawRanks(view);
  drawCards(view);
  const points = drawCharts(view);
  const ms = performance.now() - t0;
  document.body.dataset.renderMs = ms.toFixed(2);
  document.body.dataset.renders = String(Number(document.body.dataset.renders || 0) + 1);
  vscode.postMessage({ type: 'rendered', ms, points });
}

new ResizeObserver(() => {
  const width = Math.max(260, Math.floor(grid.clientWidth) - 8);
  for (const c of charts.values()) {
    c.u.setSize({ width, height: c.u.height });
  }
}).observe(grid);

window.addEventListener('message', (e) => {
  const msg = e.data;
  if (msg && msg.type === 'render' && msg.view) {
    if (!controls.firstChild) {
      drawControls();
      // The page was made anew (a reload) with a rank picked before: ask for it once.
      const r = msg.view.ranks;
      if (r && choice.rank !== null && choice.rank !== r.shown && r.list.includes(choice.rank)) {
        vscode.postMessage({ type: 'rank', rank: choice.rank });
      }
    }
    render(msg.view);
  }
});
vscode.postMessage({ type: 'ready' });
