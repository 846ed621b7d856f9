// CheckResult → the check-result page (extension/src/checks/checkResultModel.ts), from real results.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { buildResultView, csvFileName, formatDuration, lrFinderCsv, messageView, parsePageMessage, runningView } from '../../../../extension/src/checks/checkResultModel';
import { curveView } from '../../../../extension/src/checks/curveView';
import { formatCell } from '../../../../extension/src/checks/resultTable';
import { allowedFiles, syntaxErrorPosition } from '../../../../extension/src/checks/traceback';
import type { CheckResult } from '../../../../extension/src/protocol';
import { formatNumber } from '../../../../extension/src/webview/format';
import { readFixture } from '../support/fixtures';

// Real `torchdoctor check ... --json` outputs (paths rewritten to /ws); bundled tests run from out/tests.
function fixture(name: string): CheckResult {
  return readFixture<CheckResult>(`${name}.json`);
}

const ALL = [
  'overfit-pass',
  'overfit-pass-hf-kwargs',
  'overfit-fail-softmax',
  'overfit-fail-nan',
  'overfit-fail-no-params',
  'lr-find-pass',
  'lr-find-warn-diverged',
  'gradcheck-pass',
  'gradcheck-fail',
  'shapes-pass',
  'shapes-pass-hidden-tuple',
  'shapes-fail-flatten',
  'shapes-fail-own-code',
  'error-forward',
  'error-syntax',
  'error-needs-example',
  'error-import',
  'error-timeout',
  'error-no-torch',
  'cancelled',
];

test('every fixture builds a view with the verdict, header and headline', () => {
  for (const name of ALL) {
    const r = fixture(name);
    const v = buildResultView(r);
    assert.equal(v.kind, 'result', name);
    assert.equal(v.verdict.label, r.verdict, name);
    assert.ok(v.verdict.icon.length > 0, `${name}: a glyph beside the colour`);
    assert.equal(v.header.className, r.className);
    assert.equal(v.header.title, r.title);
    assert.ok(v.headline.map((p) => p.text).join('').length > 0, name);
    assert.equal(v.canExportCsv, r.check === 'lr-find' && name === 'lr-find-pass', name);
    // The view is plain data: it survives the trip through postMessage and setState.
    assert.deepEqual(JSON.parse(JSON.stringify(v)), v, name);
  }
});

test('overfit PASS: loss on the left axis, accuracy in percent on the right, no marks', () => {
  const v = buildResultView(fixture('overfit-pass'));
  const c = v.curve!;
  assert.equal(c.empty, false);
  assert.equal(c.x.scale, 'linear');
  assert.equal(c.x.label, 'step');
  assert.deepEqual(
    c.series.map((s) => [s.name, s.axis, s.faint]),
    [
      ['loss', 'left', false],
      ['accuracy', 'right', false],
    ],
  );
  assert.equal(c.y.min, 0, 'a loss axis starts at zero');
  assert.ok(c.y.max >= 1.56);
  assert.deepEqual(
    c.y2!.ticks.map((t) => t.label),
    ['0%', '25%', '50%', '75%', '100%'],
  );
  assert.deepEqual(c.marks, []);
  assert.match(c.summary, /loss against step 0 to 126: loss from 1\.564 to 0\.1544; accuracy \(right axis\) from 0% to 100%/);
  assert.equal(v.table, null);
  assert.equal(v.example, 'Batch (inferred): input (8, 20) float32 · targets (8,) int64 · cross-entropy loss');
  assert.equal(v.footer, 'Ran in 9.2 s · Python: /ws/.venv/bin/python3');
  assert.ok(v.details.some(([k, val]) => k === 'final accuracy' && val === '1'));
});

test('LR finder: log x axis in decades, the smoothed line over a faint raw loss, both suggestions marked', () => {
  const v = buildResultView(fixture('lr-find-pass'));
  const c = v.curve!;
  assert.equal(c.x.scale, 'log');
  assert.deepEqual(
    c.x.ticks.map((t) => t.label),
    ['1e-7', '1e-6', '1e-5', '1e-4', '1e-3', '1e-2', '0.1', '1', '10'],
  );
  assert.equal(c.x.min, 1e-7);
  assert.equal(c.x.max, 10);
  assert.deepEqual(
    c.series.map((s) => [s.name, s.faint]),
    [
      ['loss', true],
      ['smoothed', false],
    ],
  );
  assert.deepEqual(
    c.marks.map((m) => m.label),
    ['steepest 3.1e-02', 'min/10 1.0e+00'],
  );
  assert.equal(c.y2, null);
  assert.match(c.summary, /log scale/);
  assert.match(c.summary, /marked: steepest 3\.1e-02, min\/10 1\.0e\+00/);
});

test('a NaN loss is a gap, counted in the legend, not a zero', () => {
  const c = buildResultView(fixture('overfit-fail-nan')).curve!;
  const loss = c.series.find((s) => s.name === 'loss')!;
  assert.deepEqual(loss.points, [[0, null]]);
  assert.equal(loss.missing, 1);
  assert.match(loss.legend, /1 NaN\/Inf point not drawn/);
  assert.match(c.note, /No loss line: every loss value was NaN or Inf\./);
  assert.equal(c.x.min, 0, 'one step at 0: the axis does not go below zero');
  // accuracy still draws, so the chart is not empty
  assert.equal(c.empty, false);
});

test('an LR sweep that produced no points says so instead of drawing an empty chart', () => {
  const v = buildResultView(fixture('lr-find-warn-diverged'));
  assert.equal(v.curve!.empty, true);
  assert.match(v.curve!.emptyText, /no loss values/);
  assert.equal(v.canExportCsv, false);
});

test('gradcheck FAIL: formatted cells, the error row, status tones, and the row that opens the custom backward', () => {
  const v = buildResultView(fixture('gradcheck-fail'));
  const t = v.table!;
  assert.equal(t.errorRow, 2);
  assert.deepEqual(
    t.rows.map((r) => r.error),
    [false, false, true, false, false],
  );
  const beta = t.rows[2];
  assert.deepEqual(
    beta.cells.map((c) => c.text),
    ['act.beta', '(1,)', '1/1', '0.8262', 'FAIL', 'FAIL', '0.02686', '0.004667', '(0,)', 'SwishFn (custom autograd.Function)'],
  );
  assert.equal(beta.cells[4].tone, 'fail');
  assert.equal(t.rows[0].cells[4].tone, 'pass');
  assert.equal(t.rows[0].cells[3].text, '6.05e-8');
  assert.deepEqual(beta.target, {
    file: '/ws/models/custom_autograd.py',
    line: null,
    symbols: [
      { className: 'SwishFn', member: 'backward' },
      { className: 'SwishNet', member: 'act' },
    ],
  });
  assert.equal(beta.action, 'Open the backward of SwishFn in the editor');
  assert.deepEqual(t.rows[0].target!.symbols, [{ className: 'SwishNet', member: 'fc1' }]);
  assert.deepEqual(t.numeric, [false, false, false, true, false, false, true, true, false, false]);
  assert.match(v.headline.find((p) => p.code)!.text, /^act\.beta$/);
});

test('shape trace FAIL: the failing module row is marked and every row opens its layer', () => {
  const v = buildResultView(fixture('shapes-fail-flatten'));
  const t = v.table!;
  assert.equal(t.errorRow, 3);
  assert.equal(t.rows[3].cells[0].text, 'fc1');
  assert.equal(t.rows[3].cells[4].text, '—');
  assert.deepEqual(t.rows[3].target!.symbols, [{ className: 'LeNetish', member: 'fc1' }]);
  assert.equal(t.rows[3].action, 'Open fc1 (Linear) in the editor');
  assert.deepEqual(t.rows[0].target!.symbols, [{ className: 'LeNetish' }]);
  assert.deepEqual(
    t.rows.map((r) => r.depth),
    [0, 1, 1, 1],
  );
  assert.equal(t.rows[0].cells[5].text, '14,210');
  assert.deepEqual(t.numeric, [false, false, true, false, false, true, false, false]);
});

test('forward error: traceback frames, the last frame in user code is where to go', () => {
  const r = fixture('error-forward');
  const v = buildResultView(r);
  const e = v.error!;
  assert.equal(e.kind, 'forward-error');
  assert.equal(e.kindLabel, 'The forward raised');
  assert.equal(e.message, null, 'the message is the headline: not repeated');
  assert.deepEqual(
    e.frames.map((f) => [f.label, f.user]),
    [
      ['module.py:1778 in _wrapped_call_impl', false],
      ['module.py:1789 in _call_impl', false],
      ['fwd.py:13 in forward', true],
      ['fwd.py:5 in helper', true],
    ],
  );
  assert.deepEqual(e.location, { file: '/ws/scratch/fwd.py', line: 5, column: null, label: 'fwd.py:5 in helper' });
  assert.ok(allowedFiles(r).has('/ws/scratch/fwd.py'));
  assert.ok(allowedFiles(r).has('/ws/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py'));
  assert.ok(!allowedFiles(r).has('/etc/passwd'));
});

test('syntax error: the location is the line and column in the message', () => {
  const v = buildResultView(fixture('error-syntax'));
  assert.deepEqual(v.error!.location, { file: '/ws/scratch/syntax.py', line: 3, column: 23, label: 'syntax.py:3' });
  assert.match(v.error!.detail, /\^/);
  assert.deepEqual(syntaxErrorPosition('x.py has a syntax error at line 12: invalid'), { line: 12, column: null });
  assert.equal(syntaxErrorPosition('no position'), null);
});

test('the batch in one line, from the example the run used', () => {
  assert.equal(
    buildResultView(fixture('overfit-pass')).example,
    'Batch (inferred): input (8, 20) float32 · targets (8,) int64 · cross-entropy loss',
  );
  assert.equal(buildResultView(fixture('shapes-pass')).example, 'Batch (inferred): input (8, 3, 32, 32) float32');
  assert.equal(
    buildResultView(fixture('overfit-fail-no-params')).example,
    'Batch (from torchdoctor_example()): input (8, 20) float32 · targets (8,) int64 · cross-entropy loss',
  );
  assert.equal(buildResultView(fixture('error-syntax')).example, '');
});

test('the batch line names keyword inputs, nests a hidden tuple and says when the loss is the model\'s own', () => {
  // Hugging Face GPT-2 from torchdoctor_example(): model(**batch, labels=ids) returns its own loss.
  const hf = fixture('overfit-pass-hf-kwargs');
  assert.equal(hf.example!.loss, 'model');
  assert.deepEqual(hf.example!.inputNames, ['input_ids', 'attention_mask', 'labels']);
  assert.equal(
    buildResultView(hf).example,
    'Batch (from torchdoctor_example()): inputs input_ids=(8, 16) int64, attention_mask=(8, 16) int64, ' +
      "labels=(8, 16) int64 · targets (8, 16) int64 · the model's own loss",
  );
  // word_language_model's RNNModel: forward(input, hidden) with an LSTM (h, c) tuple.
  assert.equal(
    buildResultView(fixture('shapes-pass-hidden-tuple')).example,
    'Batch (from torchdoctor_example()): inputs (16, 8) int64, ((2, 8, 32), (2, 8, 32)) float32 · targets (128,) int64 · custom loss',
  );
  // A dict argument keeps its keys; a vocabulary dimension has no thousands separator; a result
  // from a backend without inputNames still reads.
  const r = fixture('overfit-pass');
  r.example = { ...r.example!, inputShapes: [{ input_ids: [8, 50257] }], inputDtypes: ['torch.int64'], inputNames: undefined };
  assert.equal(buildResultView(r).example, 'Batch (inferred): input {input_ids: (8, 50257)} int64 · targets (8,) int64 · cross-entropy loss');
});

test('a line with NaN holes says where it breaks', () => {
  const c = curveView({
    xLabel: 'step',
    yLabel: 'loss',
    xScale: 'linear',
    series: [{ name: 'loss', points: [[0, 1], [1, null], [2, 0.5], [3, null]] }],
    marks: [],
  })!;
  assert.deepEqual(c.series[0].points, [[0, 1], [1, null], [2, 0.5], [3, null]]);
  assert.match(c.note, /The loss line breaks where the value was NaN or Inf \(2 points\)\./);
});

test('needs-example: the snippet and what to do with it', () => {
  const v = buildResultView(fixture('error-needs-example'));
  assert.match(v.snippet!, /def torchdoctor_example\(\):/);
  assert.match(v.snippetHint, /Add this to ctor\.py \(or to a sibling torchdoctor_example\.py\)/);
  assert.equal(v.error!.kindLabel, 'Needs torchdoctor_example()');
});

test('no torch, timeout, import error and cancel have a readable kind and no chart or table', () => {
  for (const [name, label] of [
    ['error-no-torch', 'torch is not installed'],
    ['error-timeout', 'Time limit reached'],
    ['error-import', 'Import error'],
  ] as const) {
    const v = buildResultView(fixture(name));
    assert.equal(v.error!.kindLabel, label);
    assert.equal(v.curve, null);
    assert.equal(v.table, null);
  }
  const c = buildResultView(fixture('cancelled'));
  assert.equal(c.verdict.tone, 'cancelled');
  assert.equal(c.error, null);
  assert.equal(c.footer, '');
});

test('LR finder CSV: header, one row per lr, both losses, full precision', () => {
  const r = fixture('lr-find-pass');
  const csv = lrFinderCsv(r)!;
  const lines = csv.trimEnd().split('\n');
  assert.equal(lines[0], 'lr,loss,smoothed_loss');
  assert.equal(lines.length, 1 + r.curve!.series[0].points.length);
  assert.equal(lines[1], '1e-7,1.5638706684112549,1.563870668411255');
  const last = lines[lines.length - 1].split(',');
  assert.equal(Number(last[0]), 10);
  assert.ok(csv.endsWith('\n'));
});

test('LR finder CSV: NaN losses are empty cells, a missing smoothed value too; other checks have none', () => {
  const r = fixture('lr-find-pass');
  const curve = {
    xLabel: 'learning rate',
    yLabel: 'loss',
    xScale: 'log' as const,
    series: [
      { name: 'loss', points: [[1e-3, 0.5], [1e-2, null]] as [number, number | null][] },
      { name: 'smoothed', points: [[1e-3, 0.5]] as [number, number | null][] },
    ],
    marks: [],
  };
  assert.equal(lrFinderCsv({ ...r, curve }), 'lr,loss,smoothed_loss\n0.001,0.5,0.5\n0.01,,\n');
  assert.equal(lrFinderCsv(fixture('overfit-pass')), null);
  assert.equal(lrFinderCsv({ ...r, curve: null }), null);
});

test('CSV file name: <className>-lr-finder.csv, safe characters only', () => {
  assert.equal(csvFileName('TinyMLP'), 'TinyMLP-lr-finder.csv');
  assert.equal(csvFileName('Outer.Inner'), 'Outer.Inner-lr-finder.csv');
  assert.equal(csvFileName('a/b:c'), 'a_b_c-lr-finder.csv');
});

test('numbers, cells and durations read like a person wrote them', () => {
  assert.equal(formatNumber(14210), '14,210');
  assert.equal(formatNumber(0), '0');
  assert.equal(formatNumber(0.026859653432820166), '0.02686');
  assert.equal(formatNumber(6.053793964154037e-8), '6.05e-8');
  assert.equal(formatNumber(1.5), '1.5');
  assert.equal(formatNumber(2.5e7), '25,000,000');
  assert.equal(formatNumber(2.5e7 + 0.5), '2.5e7');
  assert.equal(formatNumber(Number.NaN), 'NaN');
  assert.equal(formatCell(null), '—');
  assert.equal(formatCell([8, 3, 32, 32]), '(8, 3, 32, 32)');
  assert.equal(formatCell([64]), '(64,)');
  assert.equal(formatCell(true), 'yes');
  assert.equal(formatCell('(8, 576)'), '(8, 576)');
  assert.equal(formatDuration(9.227), '9.2 s');
  assert.equal(formatDuration(0.07), '0.07 s');
  assert.equal(formatDuration(125), '2 min 5 s');
  assert.equal(formatDuration(null), '');
});

test('running and message views carry the header; a message without a run cannot re-run', () => {
  const args = { className: 'TinyMLP', check: 'lr-find', file: '/ws/models/mlp.py' };
  const r = runningView(args);
  assert.equal(r.header.title, 'LR finder');
  assert.equal(r.message, 'Running the LR finder on TinyMLP…');
  assert.equal(r.verdict.tone, 'running');
  const m = messageView('LR finder failed: `boom`', args);
  assert.equal(m.canRerun, true);
  assert.deepEqual(
    m.message.map((p) => p.code),
    [false, true],
  );
  assert.equal(messageView('The backend is not running.', null).canRerun, false);
});

test('messages from the page are checked field by field', () => {
  assert.deepEqual(parsePageMessage({ type: 'ready' }), { type: 'ready' });
  assert.deepEqual(parsePageMessage({ type: 'exportCsv', extra: 1 }), { type: 'exportCsv' });
  assert.deepEqual(parsePageMessage({ type: 'copySnippet' }), { type: 'copySnippet' });
  assert.deepEqual(parsePageMessage({ type: 'rerun' }), { type: 'rerun' });
  assert.deepEqual(parsePageMessage({ type: 'openLocation', file: '/ws/a.py', line: 5, column: 2 }), {
    type: 'openLocation',
    file: '/ws/a.py',
    line: 5,
    column: 2,
    symbols: [],
  });
  assert.deepEqual(
    parsePageMessage({ type: 'openLocation', file: '/ws/a.py', line: -1, symbols: [{ className: 'M', member: 'fc' }, { nope: 1 }] }),
    { type: 'openLocation', file: '/ws/a.py', line: null, column: null, symbols: [{ className: 'M', member: 'fc' }] },
  );
  assert.equal(parsePageMessage({ type: 'openLocation', line: 3 }), undefined);
  assert.equal(parsePageMessage({ type: 'eval', code: '1' }), undefined);
  assert.equal(parsePageMessage(null), undefined);
  assert.equal(parsePageMessage('ready'), undefined);
});
