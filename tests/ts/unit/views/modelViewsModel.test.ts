import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import {
  allowedTargets,
  BANNERS,
  barView,
  foldRepeatedFlags,
  formatMagnitude,
  GradientFlowPage,
  gradientFlowPage,
  logAxis,
  logFraction,
  MessagePage,
  messagePage,
  parseModelPageMessage,
  renderModelViewHtml,
  shapeText,
  ShapeTracePage,
  shapeTracePage,
  snapshotFacts,
  statValue,
  stopSubtitle,
  TextPart,
  withBanner,
  activationText,
  plainText,
} from '../../../../extension/src/views/modelViewsModel';
import type { DiagnoseSnapshotResult, GradientFlowModel, GradientFlowRow, ShapeTraceModel, ShapeTraceRow, TensorMeta } from '../../../../extension/src/protocol';

// Real torchDoctor/diagnoseSnapshot answers: the runtime's snapshot.dump() of small models, run
// through pybackend/torchdoctor/diagnosis (fixtures/diagnose_fixtures.py; paths rewritten to /ws).
const FIXTURES = [resolve(__dirname, '../../tests/ts/unit/fixtures'), resolve('tests/ts/unit/fixtures')];

function fixture(name: string): DiagnoseSnapshotResult {
  for (const dir of FIXTURES) {
    try {
      return JSON.parse(readFileSync(join(dir, `diagnose-${name}.json`), 'utf8')) as DiagnoseSnapshotResult;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw err;
      }
    }
  }
  throw new Error(`fixture diagnose-${name} not found`);
}

const FILE = '/ws/models/cnn.py';
const CTX = { subtitle: '“Train” · paused (breakpoint) at 10:00:00' };

/** A row; a statistic may be given as "nan"/"inf" too (an older payload spelled them so). */
function grow(name: string, meanAbs: number | string | null, maxAbs: number | string | null, extra: Partial<GradientFlowRow> = {}): GradientFlowRow {
  return {
    name,
    module: name.replace(/\.(weight|bias)$/, ''),
    type: 'Linear',
    meanAbs: meanAbs as number | null,
    maxAbs: maxAbs as number | null,
    norm: typeof maxAbs === 'number' ? maxAbs * 2 : null,
    nan: false,
    inf: false,
    flags: [],
    location: { file: FILE, line: 10 },
    ...extra,
  };
}

const DEAD = { rule: 'dead-units', severity: 'warning' as const, sentence: '73% of the units after conv2 are zero.', suggestion: 'Use LeakyReLU.' };
const VANISH = (n: string) => ({ rule: 'vanishing', severity: 'error' as const, sentence: `${n} mean |g| under 1e-7.`, suggestion: 'Add normalisation.' });

function gradientModel(): GradientFlowModel {
  return {
    summary: 'Gradients flow; conv2 is dead.',
    rows: [
      grow('conv1.weight', 2e-3, 4e-2),
      grow('conv2.weight', 0, 0, { flags: [DEAD], location: { file: FILE, line: 13 } }),
      grow('fc.weight', 3e-9, 1e-8, { flags: [VANISH('fc.weight')], location: { file: '/ws/models/head.py', line: 4 } }),
      grow('fc.bias', null, null, { location: null }),
      grow('bad.weight', 'nan', 'inf', { nan: 12, inf: true }),
    ],
    verdicts: [
      { rule: 'ratio', severity: 'warning', sentence: 'First/last ratio 700×.', suggestion: 'Clip gradients.', module: 'fc' },
      { rule: 'none', severity: 'info', sentence: 'fc.bias got no gradient.', suggestion: '', module: null },
      { rule: 'x', severity: 'error', sentence: '', suggestion: 'dropped: no sentence', module: null },
    ],
  };
}

function text(parts: TextPart[]): string {
  return parts.map((p) => p.text).join('');
}

function page<T>(v: T | MessagePage, kind: string): T {
  assert.equal((v as { kind: string }).kind, kind, JSON.stringify(v).slice(0, 300));
  return v as T;
}

// ---------------------------------------------------------------------------------------------
// Numbers and the log axis

test('statValue: numbers, JSON stand-ins for NaN/Inf, anything else null', () => {
  assert.equal(statValue(1.5), 1.5);
  assert.ok(Number.isNaN(statValue('nan')!));
  assert.equal(statValue('inf'), Infinity);
  assert.equal(statValue('-Infinity'), -Infinity);
  assert.equal(statValue('2e-3'), 2e-3);
  for (const v of [null, undefined, '', 'abc', {}, [], true]) {
    assert.equal(statValue(v), null, JSON.stringify(v));
  }
});

test('logAxis spans 1e-9..1e3 by default and grows by whole decades to fit the data', () => {
  const d = logAxis([1e-3, 5e-2, null, 0, NaN, Infinity]);
  assert.deepEqual([d.lo, d.hi], [-9, 3]);
  assert.equal(d.ticks.length, 13);
  assert.deepEqual(d.ticks[0], { exp: -9, label: '1e-9', fraction: 0 });
  assert.equal(d.ticks[9].label, '1');
  assert.equal(d.ticks[12].fraction, 1);
  const wide = logAxis([3e-12, 4.2e5]);
  assert.deepEqual([wide.lo, wide.hi], [-12, 6]);
  const exact = logAxis([1e-10, 1e4]);
  assert.deepEqual([exact.lo, exact.hi], [-10, 4], 'a power of ten is its own decade');
  const extreme = logAxis([1e-300, 1e300]);
  assert.deepEqual([extreme.lo, extreme.hi], [-45, 39], 'clamped to float range');
});

test('logFraction and barView: log positions, zero, no gradient, NaN, Inf, off-axis values', () => {
  const axis = logAxis([]);
  assert.equal(logFraction(1e-9, axis), 0);
  assert.equal(logFraction(1e3, axis), 1);
  assert.ok(Math.abs(logFraction(1e-3, axis) - 0.5) < 1e-12);
  assert.deepEqual(barView(1e-3, axis, false, false), { kind: 'value', fraction: logFraction(1e-3, axis), text: '0.001' });
  assert.deepEqual(barView(-1e-3, axis, false, false).kind, 'value', 'a magnitude');
  assert.deepEqual(barView(0, axis, false, false), { kind: 'zero', fraction: 0, text: '0' });
  assert.deepEqual(barView(null, axis, false, false), { kind: 'none', fraction: 0, text: '—' });
  assert.equal(barView(null, axis, true, false).kind, 'nan');
  assert.equal(barView(null, axis, false, true).kind, 'inf');
  assert.equal(barView(NaN, axis, false, false).kind, 'nan');
  assert.deepEqual(barView(Infinity, axis, false, false), { kind: 'inf', fraction: 1, text: 'Inf' });
  const below = barView(1e-12, axis, false, false);
  assert.equal(below.kind, 'below');
  assert.ok(below.fraction > 0 && below.fraction < 0.01);
  assert.equal(barView(1e5, axis, false, false).kind, 'above');
  assert.ok(barView(1.0001e-9, axis, false, false).fraction > 0, 'a value at the axis start still shows a sliver');
});

test('formatMagnitude: 3 significant digits, exponents outside [1e-3, 1e3)', () => {
  assert.equal(formatMagnitude(0.0123456), '0.0123');
  assert.equal(formatMagnitude(12.345), '12.3');
  assert.equal(formatMagnitude(999), '999');
  assert.equal(formatMagnitude(1234), '1.23e3');
  assert.equal(formatMagnitude(3.2e-7), '3.2e-7');
  assert.equal(formatMagnitude(4.2e5), '4.2e5');
  assert.equal(formatMagnitude(1e-9), '1e-9');
  assert.equal(formatMagnitude(0), '0');
  assert.equal(formatMagnitude(NaN), 'NaN');
  assert.equal(formatMagnitude(-Infinity), '-Inf');
});

// ---------------------------------------------------------------------------------------------
// Gradient flow

test('gradientFlowPage: one row per parameter in order, bars on one axis, flags and counts', () => {
  const v = page<GradientFlowPage>(gradientFlowPage(gradientModel(), CTX), 'gradientFlow');
  assert.equal(v.title, 'Gradient Flow');
  assert.equal(v.subtitle, CTX.subtitle);
  assert.deepEqual(v.summary, [{ text: 'Gradients flow; conv2 is dead.', code: false }]);
  assert.deepEqual(
    v.rows.map((r) => r.name),
    ['conv1.weight', 'conv2.weight', 'fc.weight', 'fc.bias', 'bad.weight'],
  );
  assert.deepEqual(v.counts, { rows: 5, flagged: 2, error: 1, warning: 1, info: 0 });
  const [conv1, conv2, fc, bias, bad] = v.rows;
  assert.equal(conv1.mean.kind, 'value');
  assert.equal(conv1.mean.text, '0.002');
  assert.equal(conv1.norm, '0.08');
  assert.ok(conv1.max.fraction > conv1.mean.fraction, 'max |g| reaches further than mean |g|');
  assert.equal(conv1.tone, null);
  assert.equal(conv2.mean.kind, 'zero');
  assert.equal(conv2.tone, 'warning');
  assert.equal(conv2.flags[0].icon, '⚠');
  assert.deepEqual(conv2.flags[0].sentence, [{ text: DEAD.sentence, code: false }]);
  assert.equal(conv2.flags[0].plain, DEAD.sentence);
  assert.equal(conv2.flags[0].label, 'Warning');
  assert.equal(fc.tone, 'error');
  assert.equal(fc.mean.kind, 'value', '3e-9 is on the default axis');
  assert.equal(bias.mean.kind, 'none');
  assert.equal(bias.target, null);
  assert.equal(bias.norm, '—');
  assert.equal(bad.mean.kind, 'nan');
  assert.equal(bad.max.kind, 'inf');
  assert.equal(bad.nonFinite, '12 NaN and Inf');
  assert.match(bad.label, /12 NaN and Inf in the gradient/);
  assert.match(conv2.label, /^conv2\.weight \(Linear\): mean \|g\| 0, max \|g\| 0\. Warning: 73% of the units/);
  assert.match(conv2.label, /Enter opens cnn\.py:13\.$/);
});

test('gradientFlowPage: verdicts sorted by severity, linked to their module, empty sentences dropped', () => {
  const v = page<GradientFlowPage>(gradientFlowPage(gradientModel(), CTX), 'gradientFlow');
  assert.deepEqual(
    v.verdicts.map((x) => [x.tone, x.module]),
    [
      ['warning', 'fc'],
      ['info', null],
    ],
  );
  assert.deepEqual(v.verdicts[0].target, { file: '/ws/models/head.py', line: 4 });
  assert.equal(v.verdicts[1].target, null);
  assert.equal(v.verdicts[1].icon, 'ℹ');
});

test('gradientFlowPage: a run of rows flagged by one rule writes its verdict once', () => {
  const rows: GradientFlowRow[] = [];
  for (let i = 0; i < 6; i++) {
    rows.push(grow(`b${i}.weight`, 1e-8, 1e-7, { flags: i >= 2 ? [VANISH(`b${i}`)] : [] }));
  }
  rows[1].flags = [DEAD];
  const v = page<GradientFlowPage>(gradientFlowPage({ summary: '', rows, verdicts: [] }, CTX), 'gradientFlow');
  assert.deepEqual(
    v.rows.map((r) => r.details.map((d) => [d.flag.rule, d.repeats])),
    [[], [['dead-units', 0]], [['vanishing', 3]], [], [], []],
  );
  assert.equal(v.rows[5].flags.length, 1, 'the folded rows keep their own flags (icon, aria-label)');
  assert.equal(text(v.summary), '6 parameters, 5 flagged.');
});

test('foldRepeatedFlags: flags without a rule are never folded', () => {
  const v = page<GradientFlowPage>(
    gradientFlowPage(
      {
        summary: 's',
        rows: [
          grow('a', 1, 1, { flags: [{ ...DEAD, rule: '' }] }),
          grow('b', 1, 1, { flags: [{ ...DEAD, rule: '' }] }),
        ],
        verdicts: [],
      },
      CTX,
    ),
    'gradientFlow',
  );
  foldRepeatedFlags(v.rows);
  assert.deepEqual(
    v.rows.map((r) => r.details.length),
    [1, 1],
  );
});

test('gradientFlowPage: no rows, or nothing at all, is the "no gradients yet" page', () => {
  for (const model of [null, undefined, { summary: '', rows: [], verdicts: [] }]) {
    const v = gradientFlowPage(model as GradientFlowModel, CTX) as MessagePage;
    assert.equal(v.kind, 'message');
    assert.equal(v.state, 'empty');
    assert.equal(v.headline, 'No gradients yet.');
    assert.match(v.text, /backward/);
  }
  const said = gradientFlowPage({ summary: 'No backward has run through Net yet.', rows: [], verdicts: [] }, CTX) as MessagePage;
  assert.equal(said.text, 'No backward has run through Net yet.', "the backend's own sentence wins");
});

test('gradientFlowPage survives a payload of the wrong shape', () => {
  const junk = {
    summary: 42,
    rows: [null, 'x', { name: 7, meanAbs: {}, flags: 'no', location: { file: 3 } }, { flags: [{ severity: 'fatal', sentence: 'S' }] }],
    verdicts: 'none',
  } as unknown as GradientFlowModel;
  const v = page<GradientFlowPage>(gradientFlowPage(junk, CTX), 'gradientFlow');
  assert.equal(v.rows.length, 4);
  assert.equal(v.rows[0].name, 'parameter 1');
  assert.equal(v.rows[2].target, null);
  assert.equal(v.rows[3].flags[0].tone, 'warning', 'an unknown severity reads as a warning');
  assert.deepEqual(v.verdicts, []);
});

// ---------------------------------------------------------------------------------------------
// Shape trace

const t = (shape: number[] | null, dtype = 'float32', device = 'cpu'): TensorMeta => ({ shape, dtype, device });

function srow(path: string, type: string, depth: number, inputs: TensorMeta[], outputs: TensorMeta[], params: number, extra: Partial<ShapeTraceRow> = {}): ShapeTraceRow {
  return { path, type, depth, inputs, outputs, params, dtypeChange: false, deviceChange: false, failed: false, location: { file: FILE, line: 5 + depth }, ...extra };
}

test('shapeText: tuples without thousands separators; a 1-d shape keeps its comma', () => {
  assert.equal(shapeText(t([64, 1152])), '(64, 1152)');
  assert.equal(shapeText(t([10])), '(10,)');
  assert.equal(shapeText(t([])), '()');
  assert.equal(shapeText(t(null)), '?');
});

test('shapeTracePage: the module tree with shapes, params and dtype/device changes', () => {
  const model: ShapeTraceModel = {
    summary: '',
    failedModule: null,
    error: null,
    rows: [
      srow('', 'Net', 0, [t([8, 3, 32, 32])], [t([8, 10], 'float16', 'cuda:0')], 12345, { dtypeChange: true, deviceChange: true }),
      srow('features', 'Sequential', 1, [t([8, 3, 32, 32])], [t([8, 1152])], 448),
      srow('features.0', 'Conv2d', 2, [t([8, 3, 32, 32]), t(null)], [t([8, 16, 32, 32])], 448),
      srow('half', 'Half', 1, [t([8, 1152])], [t([8, 1152], 'float16')], 0, { dtypeChange: true }),
      srow('to', 'To', 1, [t([8, 1152], 'torch.float16')], [t([8, 1152], 'float16', 'cuda:0')], 0, { deviceChange: true }),
    ],
  };
  const v = page<ShapeTracePage>(shapeTracePage(model, CTX), 'shapeTrace');
  assert.equal(text(v.summary), '5 module calls in the last forward.');
  assert.equal(v.failure, null);
  assert.equal(v.uniform, '', 'dtypes and devices change');
  assert.equal(v.counts.changes, 3);
  const [root, feats, conv, half, to] = v.rows;
  assert.equal(root.name, '(model)');
  assert.equal(root.dtypeNote, 'float32 → float16');
  assert.equal(root.deviceNote, 'cpu → cuda:0');
  assert.equal(root.params, '12,345');
  assert.equal(feats.output, '(8, 1152)');
  assert.equal(conv.name, '0');
  assert.equal(conv.depth, 2);
  assert.equal(conv.input, '(8, 3, 32, 32), ?');
  assert.equal(half.dtypeNote, 'float32 → float16');
  assert.equal(half.deviceNote, '');
  assert.equal(to.deviceNote, 'cpu → cuda:0');
  assert.equal(to.dtypeNote, '');
  assert.match(root.label, /dtype float32 → float16; device cpu → cuda:0\. Enter opens cnn\.py:5\.$/);
});

test('shapeTracePage: the failing module is marked, its parents never returned, the error is kept', () => {
  const model: ShapeTraceModel = {
    summary: '',
    failedModule: 'head.0',
    error: 'RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x800 and 512x10)',
    rows: [
      srow('', 'Net', 0, [t([64, 1, 28, 28])], [], 100),
      srow('flat', 'Flatten', 1, [t([64, 8, 10, 10])], [t([64, 800])], 0),
      srow('head', 'Sequential', 1, [t([64, 800])], [], 5130),
      srow('head.0', 'Linear', 2, [t([64, 800])], [], 5130, { failed: true, location: { file: FILE, line: 12 } }),
    ],
  };
  const v = page<ShapeTracePage>(shapeTracePage(model, CTX), 'shapeTrace');
  assert.deepEqual(v.failure, {
    module: 'head.0',
    type: 'Linear',
    where: 'head.0 (Linear)',
    error: model.error,
    explanation: [],
    target: { file: FILE, line: 12 },
    row: 3,
  });
  assert.deepEqual(
    v.rows.map((r) => [r.failed, r.unfinished, r.output]),
    [
      [false, true, 'did not return'],
      [false, false, '(64, 800)'],
      [false, true, 'did not return'],
      [true, false, 'raised'],
    ],
  );
  assert.equal(text(v.summary), 'The forward failed in head.0 (Linear) after 3 module calls.');
  assert.equal(v.uniform, 'All tensors float32 on cpu.');
  assert.match(v.rows[3].label, /the shape error was raised here/);
});

test('shapeTracePage: failedModule alone marks its row; an error with no rows still shows', () => {
  const v = page<ShapeTracePage>(
    shapeTracePage({ summary: 's', failedModule: 'fc', error: null, rows: [srow('fc', 'Linear', 1, [t([2, 3])], [], 9)] }, CTX),
    'shapeTrace',
  );
  assert.equal(v.rows[0].failed, true);
  assert.equal(v.failure?.error, 'The forward raised in this module.');
  const only = page<ShapeTracePage>(shapeTracePage({ summary: '', failedModule: null, error: 'ValueError: x', rows: [] }, CTX), 'shapeTrace');
  assert.equal(only.failure?.error, 'ValueError: x');
  assert.equal(only.failure?.row, null);
  const none = shapeTracePage({ summary: '', failedModule: null, error: null, rows: [] }, CTX) as MessagePage;
  assert.equal(none.kind, 'message');
  assert.equal(none.headline, 'No module calls recorded.');
});

test('shapeTracePage: depth from the path when missing, junk never throws', () => {
  const junk = { rows: [{ path: 'a.b.c', inputs: 'x', outputs: [{ shape: ['1'] }], params: 'many' }, 5] } as unknown as ShapeTraceModel;
  const v = page<ShapeTracePage>(shapeTracePage(junk, CTX), 'shapeTrace');
  assert.equal(v.rows[0].depth, 3);
  assert.equal(v.rows[0].input, '—');
  assert.equal(v.rows[0].output, '?');
  assert.equal(v.rows[0].params, '—');
  assert.equal(v.rows[1].name, '(model)');
});

// ---------------------------------------------------------------------------------------------
// States, banners, clicks, the shell

test('messagePage: each state has its words; errors carry the message and the detail', () => {
  const states = ['loading', 'no-session', 'not-paused', 'no-model', 'no-runtime', 'backend'] as const;
  for (const s of states) {
    const v = messagePage('gradientFlow', s, 'sub');
    assert.equal(v.state, s);
    assert.ok(v.headline.length > 0, s);
    assert.equal(v.canRefresh, s !== 'loading');
  }
  assert.equal(messagePage('shapeTrace', 'not-paused', '').headline, 'The program is not paused.');
  assert.match(messagePage('shapeTrace', 'no-runtime', '').text, /torchdoctor launch configuration/);
  const err = messagePage('shapeTrace', 'error', 's', 'ValueError: boom', 'Traceback...\nValueError: boom');
  assert.equal(err.headline, 'ValueError: boom');
  assert.equal(err.text, '');
  assert.equal(err.detail, 'Traceback...\nValueError: boom');
  assert.equal(messagePage('shapeTrace', 'error', 's', 'same', 'same').detail, '', 'no detail that repeats the headline');
  assert.equal(messagePage('gradientFlow', 'no-model', '', '', 'runtime words').detail, 'runtime words');
});

test('withBanner puts a banner on data pages only', () => {
  const data = gradientFlowPage(gradientModel(), CTX);
  const stale = withBanner(data, BANNERS.stale) as GradientFlowPage;
  assert.deepEqual(stale.banner, { state: 'stale', text: 'The debug session ended; the last data is shown.' });
  assert.equal((data as GradientFlowPage).banner, null, 'not mutated');
  assert.equal((withBanner(stale, null) as GradientFlowPage).banner, null);
  const msg = messagePage('gradientFlow', 'not-paused', '');
  assert.equal(withBanner(msg, BANNERS.running), msg);
});

test('allowedTargets: only files the view names', () => {
  const gf = gradientFlowPage(gradientModel(), CTX);
  assert.deepEqual([...allowedTargets(gf)].sort(), ['/ws/models/cnn.py', '/ws/models/head.py']);
  const st = shapeTracePage(
    { summary: '', failedModule: 'x', error: 'e', rows: [srow('x', 'L', 1, [], [], 0, { failed: true, location: { file: '/ws/x.py', line: 2 } })] },
    CTX,
  );
  assert.deepEqual([...allowedTargets(st)], ['/ws/x.py']);
  assert.equal(allowedTargets(messagePage('gradientFlow', 'loading', '')).size, 0);
  assert.equal(allowedTargets(undefined).size, 0);
});

test('parseModelPageMessage checks every field', () => {
  assert.deepEqual(parseModelPageMessage({ type: 'ready' }), { type: 'ready' });
  assert.deepEqual(parseModelPageMessage({ type: 'refresh', extra: 1 }), { type: 'refresh' });
  assert.deepEqual(parseModelPageMessage({ type: 'openLocation', file: '/a.py', line: 4 }), { type: 'openLocation', file: '/a.py', line: 4 });
  assert.deepEqual(parseModelPageMessage({ type: 'openLocation', file: '/a.py', line: -3 }), { type: 'openLocation', file: '/a.py', line: 1 });
  assert.deepEqual(parseModelPageMessage({ type: 'openLocation', file: '/a.py', line: 2.5 }), { type: 'openLocation', file: '/a.py', line: 1 });
  for (const bad of [null, 'ready', 3, {}, { type: 'openLocation' }, { type: 'openLocation', file: '' }, { type: 'openLocation', file: 7 }, { type: 'eval' }]) {
    assert.equal(parseModelPageMessage(bad), undefined, JSON.stringify(bad));
  }
});

test('renderModelViewHtml: a CSP with the nonce, scripts only with it, no data, everything escaped', () => {
  const html = renderModelViewHtml({
    cspSource: 'vscode-resource:',
    nonce: 'N0nce+/=',
    scriptUris: ['https://file+.vscode-resource/x/modelViewPage.js', 'https://file+.vscode-resource/x/gradientFlow.js?a=1&b="2"'],
    styleUris: ['https://file+.vscode-resource/x/modelViewPage.css'],
    title: 'Gradient <Flow>',
  });
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src vscode-resource:; script-src 'nonce-N0nce\+\/='; img-src vscode-resource: data:">/);
  const scripts = html.match(/<script[^>]*>/g) ?? [];
  assert.equal(scripts.length, 2);
  for (const s of scripts) {
    assert.match(s, /^<script nonce="N0nce\+\/=" src="[^"]+">$/);
  }
  assert.ok(html.includes('gradientFlow.js?a=1&amp;b=&quot;2&quot;'));
  assert.ok(html.includes('<title>Gradient &lt;Flow&gt;</title>'));
  assert.ok(!/<script[^>]*>[^<]/.test(html), 'no inline script');
  assert.ok(!/style=/.test(html), 'no inline style');
  assert.ok(!/https?:\/\/(?!file\+)/.test(html), 'nothing remote');
});

test('stopSubtitle and snapshotFacts', () => {
  const at = new Date(2025, 0, 1, 9, 5, 7);
  assert.equal(stopSubtitle('Train', 'breakpoint', at), '“Train” · paused (breakpoint) at 09:05:07');
  assert.equal(stopSubtitle('Train', null, at, 'Net, forward 3'), '“Train” · Net, forward 3 · paused at 09:05:07');
  assert.equal(snapshotFacts({ model: { type: 'Net', passNumber: 3, focus: null } }), 'Net, forward 3');
  assert.equal(snapshotFacts({ model: { type: 'Net', passNumber: 1, focus: 'fc1' } }), 'Net, forward 1, picked: fc1');
  assert.equal(snapshotFacts({ model: null }), '');
  assert.equal(snapshotFacts('junk'), '');
});

// ---------------------------------------------------------------------------------------------
// The backend's real answers

test('real: a healthy CNN draws every parameter with bars, thresholds and no flags', () => {
  const r = fixture('cnn-ok');
  assert.equal(r.status, 'ok');
  const v = page<GradientFlowPage>(gradientFlowPage(r.gradientFlow, CTX), 'gradientFlow');
  assert.deepEqual(
    v.rows.map((x) => x.name),
    ['features.0.weight', 'features.0.bias', 'classifier.weight', 'classifier.bias'],
  );
  assert.ok(v.rows.every((x) => x.mean.kind === 'value' && x.max.kind === 'value' && x.tone === null));
  assert.equal(v.counts.flagged, 0);
  assert.deepEqual(
    v.thresholds.map((t) => [t.kind, t.label]),
    [
      ['vanishing', 'vanishing < 1e-7'],
      ['exploding', 'exploding > 100'],
    ],
  );
  assert.ok(Math.abs(v.thresholds[0].fraction - 2 / 12) < 1e-12, '1e-7 on the 1e-9..1e3 axis');
  assert.match(text(v.summary), /^SmallCNN after backward 1: no gradient problems in 4 parameters/);
  assert.ok(v.summary.some((p) => p.code), 'backticks become code');
  assert.deepEqual(v.rows[0].target, { file: '/ws/diagnose_fixtures.py', line: 33 }, 'the line of self.features = ...');
  const st = page<ShapeTracePage>(shapeTracePage(r.shapeTrace, CTX), 'shapeTrace');
  assert.deepEqual(
    st.rows.map((x) => [x.path, x.depth, x.input, x.output]),
    [
      ['', 0, '(4, 3, 16, 16)', '(4, 10)'],
      ['features', 1, '(4, 3, 16, 16)', '(4, 8, 8, 8)'],
      ['features.0', 2, '(4, 3, 16, 16)', '(4, 8, 16, 16)'],
      ['features.1', 2, '(4, 8, 16, 16)', '(4, 8, 16, 16)'],
      ['features.2', 2, '(4, 8, 16, 16)', '(4, 8, 8, 8)'],
      ['flatten', 1, '(4, 8, 8, 8)', '(4, 512)'],
      ['classifier', 1, '(4, 512)', '(4, 10)'],
    ],
  );
  assert.equal(st.uniform, '', 'the backend summary already says "all tensors float32 on cpu"');
  assert.match(st.rows[2].activation, /^mean -?[\d.e-]+ · std [\d.e-]+/);
});

test('real: a dead ReLU is flagged on its layers, in the verdicts and in the trace', () => {
  const r = fixture('dead-relu');
  const v = page<GradientFlowPage>(gradientFlowPage(r.gradientFlow, CTX), 'gradientFlow');
  const fc1 = v.rows.find((x) => x.name === 'fc1.weight')!;
  assert.equal(fc1.mean.kind, 'zero');
  assert.equal(fc1.tone, 'warning');
  assert.ok(fc1.flags.some((f) => f.rule === 'dead-units'));
  assert.ok(v.verdicts.some((x) => x.rule === 'dead-units' && x.module === 'relu'));
  const relu = v.verdicts.find((x) => x.rule === 'dead-units')!;
  assert.deepEqual(relu.target, { file: '/ws/diagnose_fixtures.py', line: 51 }, 'a ReLU owns no parameter: located through the activations');
  // fc1.bias says what fc1.weight says: written once; fc2.weight has another next step: its own
  const details = Object.fromEntries(v.rows.map((x) => [x.name, x.details.map((d) => [d.flag.rule, d.repeats])]));
  assert.deepEqual(details['fc1.weight'], [
    ['grad-vanishing', 1],
    ['dead-units', 1],
  ]);
  assert.deepEqual(details['fc1.bias'], []);
  assert.deepEqual(details['fc2.weight'], [['grad-vanishing', 0]]);
  const st = page<ShapeTracePage>(shapeTracePage(r.shapeTrace, CTX), 'shapeTrace');
  const reluRow = st.rows.find((x) => x.path === 'relu')!;
  assert.equal(reluRow.tone, 'warning');
  assert.equal(reluRow.flags[0].rule, 'dead-units');
  assert.match(reluRow.activation, /zeros 100%/);
  assert.equal(st.counts.flagged, 2);
});

test('real: a shape mismatch marks the failing Linear, its parents never returned, the plain words apart', () => {
  const r = fixture('shape-mismatch');
  const st = page<ShapeTracePage>(shapeTracePage(r.shapeTrace, CTX), 'shapeTrace');
  const f = st.failure!;
  assert.equal(f.where, 'head.0 (Linear)');
  assert.equal(f.error, 'RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x1152 and 512x10)');
  assert.match(text(f.explanation), /^Layer head\.0 \(Linear\) expects 512 input features/);
  assert.ok(f.explanation.some((p) => p.code && p.text === 'head.0'));
  assert.equal(st.rows[f.row!].path, 'head.0');
  assert.deepEqual(
    st.rows.map((x) => [x.path, x.failed, x.unfinished, x.output]),
    [
      ['', false, true, 'did not return'],
      ['conv', false, false, '(4, 8, 24, 24)'],
      ['pool', false, false, '(4, 8, 12, 12)'],
      ['flat', false, false, '(4, 1152)'],
      ['head', false, true, 'did not return'],
      ['head.0', true, false, 'raised'],
    ],
  );
  assert.equal(st.uniform, 'All tensors float32 on cpu.', 'the summary is hidden under a failure: said here');
  // no backward happened: the gradient view says so
  const gf = gradientFlowPage(r.gradientFlow, CTX) as MessagePage;
  assert.equal(gf.kind, 'message');
  assert.equal(gf.state, 'empty');
  assert.equal(gf.text, 'No gradients yet for BadShapes: pause after loss.backward() to see them.');
});

test('real: NaN gradients are NaN bars and error flags', () => {
  const r = fixture('nan-grad');
  const v = page<GradientFlowPage>(gradientFlowPage(r.gradientFlow, CTX), 'gradientFlow');
  assert.ok(v.rows.every((x) => x.tone === 'error'));
  assert.ok(v.rows.every((x) => x.nonFinite !== ''));
  assert.equal(v.verdicts[0].tone, 'error');
  assert.equal(v.rows[0].details.length, 1);
  assert.equal(v.rows[0].details[0].repeats, v.rows.length - 1);
});

test('real: paused inside the forward, the innermost call is marked and not returned yet', () => {
  const r = fixture('paused-inside');
  const st = page<ShapeTracePage>(shapeTracePage(r.shapeTrace, CTX), 'shapeTrace');
  const probe = st.rows.find((x) => x.path === 'probe')!;
  assert.equal(probe.paused, true);
  assert.equal(probe.output, 'not returned yet');
  assert.equal(st.rows[0].output, 'not returned yet');
  assert.equal(st.rows[0].paused, false);
  assert.match(probe.label, /the program is paused inside it/);
  const inner = st.rows.find((x) => x.path === 'inner')!;
  assert.equal(inner.dtypeNote, 'float32 → float64');
  assert.equal(st.counts.changes, 1);
});

test('real: after a forward only, the activation verdicts show without a gradient table', () => {
  const r = fixture('forward-only');
  const v = page<GradientFlowPage>(gradientFlowPage(r.gradientFlow, CTX), 'gradientFlow');
  assert.equal(v.rows.length, 0);
  assert.ok(v.verdicts.length > 0);
  assert.match(v.emptyText, /backward/);
  assert.match(text(v.summary), /^No gradients yet for DeadMLP/);
});

test('real: an empty snapshot answers no view models', () => {
  const r = fixture('empty');
  assert.equal(r.status, 'empty');
  assert.equal(r.gradientFlow, null);
  assert.equal(r.shapeTrace, null);
});

test('activationText and plainText', () => {
  assert.equal(activationText({ mean: -0.0123, std: 1.02, zeros: 0.734, nonFinite: 0 }), 'mean -0.0123 · std 1.02 · zeros 73.4%');
  assert.equal(activationText({ mean: 1, std: 0, zeros: 1, nonFinite: 4 }), 'mean 1 · std 0 · zeros 100% · 4 NaN/Inf');
  assert.equal(activationText({ mean: null, std: null, zeros: 0, nonFinite: true }), 'NaN/Inf');
  assert.equal(activationText(null), '');
  assert.equal(plainText('`fc1` (Linear) is dead'), 'fc1 (Linear) is dead');
});

test('shapeText names a non-tensor by its type; the model that raised in its own code', () => {
  assert.equal(shapeText({ shape: null, dtype: null, device: null, type: 'NoneType' }), 'None');
  assert.equal(shapeText({ shape: null, dtype: null, device: null, type: 'int' }), 'int');
  const v = page<ShapeTracePage>(
    shapeTracePage(
      {
        summary: '',
        failedModule: '',
        error: 'ValueError: bad view\n\nThe reshape in `forward()` does not fit.',
        explanation: 'The reshape in `forward()` does not fit.',
        rows: [srow('', 'Net', 0, [t([2, 3])], [], 0, { failed: true, status: 'failed' })],
      },
      CTX,
    ),
    'shapeTrace',
  );
  assert.equal(v.failure!.where, 'Net (its own forward)');
  assert.equal(v.failure!.error, 'ValueError: bad view');
  assert.equal(text(v.failure!.explanation), 'The reshape in forward() does not fit.');
  assert.equal(v.rows[0].failed, true);
});
