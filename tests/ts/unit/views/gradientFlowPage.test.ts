// The gradient-flow page (extension/src/views/gradientFlowPage.ts), hand-made and real payloads.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import type { GradientFlowModel, GradientFlowRow } from '../../../../extension/src/protocol';
import { foldedDetails, gradientFlowPage } from '../../../../extension/src/views/gradientFlowPage';
import { flagView } from '../../../../extension/src/views/payload';
import { shapeTracePage } from '../../../../extension/src/views/shapeTracePage';
import type { GradientFlowPage, MessagePage, ShapeTracePage } from '../../../../extension/src/views/viewTypes';
import { generatorLine } from '../support/fixtures';
import { CTX, DEAD, fixture, gradientModel, grow, page, text, VANISH } from '../support/viewPayloads';

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
  // Folded by the backend (diagnosis/presentation.py, where "never fold a flag without a rule"
  // and the counts are tested); the page draws the fold as given.
  const folds = [[], [{ flag: 0, repeats: 0 }], [{ flag: 0, repeats: 3 }], [], [], []];
  rows.forEach((r, i) => (r.fold = folds[i]));
  const v = page<GradientFlowPage>(gradientFlowPage({ summary: '', rows, verdicts: [] }, CTX), 'gradientFlow');
  assert.deepEqual(
    v.rows.map((r) => r.details.map((d) => [d.flag.rule, d.repeats])),
    [[], [['dead-units', 0]], [['vanishing', 3]], [], [], []],
  );
  assert.equal(v.rows[5].flags.length, 1, 'the folded rows keep their own flags (icon, aria-label)');
  assert.deepEqual(v.summary, [], 'no sentence of its own: the summary is the backend\'s');
});

test('foldedDetails: the backend\'s fold, checked: unknown flags dropped, repeats within the rows below', () => {
  const flags = [flagView(DEAD)!, flagView(VANISH('a'))!];
  assert.deepEqual(
    foldedDetails([{ flag: 1, repeats: 2 }, { flag: 0, repeats: 0 }], flags, 5).map((d) => [d.flag.rule, d.repeats]),
    [['vanishing', 2], ['dead-units', 0]],
  );
  assert.deepEqual(foldedDetails([{ flag: 2 }, { flag: -1 }, { flag: 0.5 }, 'x', null], flags, 5), []);
  assert.deepEqual(foldedDetails([{ flag: 0, repeats: 40 }], flags, 3)[0].repeats, 3);
  assert.deepEqual(foldedDetails('none', flags, 3), []);
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
  assert.deepEqual(v.rows[0].target, { file: '/ws/diagnose_fixtures.py', line: generatorLine('self.features = ') }, 'the line of self.features = ...');
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
  assert.deepEqual(relu.target, { file: '/ws/diagnose_fixtures.py', line: generatorLine('self.relu = nn.ReLU()') }, 'a ReLU owns no parameter: located through the activations');
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

test('real: NaN gradients are NaN bars and error flags', () => {
  const r = fixture('nan-grad');
  const v = page<GradientFlowPage>(gradientFlowPage(r.gradientFlow, CTX), 'gradientFlow');
  assert.ok(v.rows.every((x) => x.tone === 'error'));
  assert.ok(v.rows.every((x) => x.nonFinite !== ''));
  assert.equal(v.verdicts[0].tone, 'error');
  assert.equal(v.rows[0].details.length, 1);
  assert.equal(v.rows[0].details[0].repeats, v.rows.length - 1);
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

test("verdictCounts: the backend's chips over the verdicts, checked", () => {
  const real = page<GradientFlowPage>(gradientFlowPage(fixture('dead-relu').gradientFlow, CTX), 'gradientFlow');
  const severities = real.verdicts.map((x) => x.tone);
  assert.deepEqual(real.verdictCounts, {
    error: severities.filter((s) => s === 'error').length,
    warning: severities.filter((s) => s === 'warning').length,
    info: severities.filter((s) => s === 'info').length,
  });
  const junk = { ...gradientModel(), verdictCounts: { error: -1, warning: 'x', info: 2.5 } } as unknown as GradientFlowModel;
  assert.deepEqual(page<GradientFlowPage>(gradientFlowPage(junk, CTX), 'gradientFlow').verdictCounts, { error: 0, warning: 0, info: 0 });
});


test('gradientFlowPage: blocks become groups with their own bars; bad groups are dropped', () => {
  const rows = ['emb.weight', 'h.0.fc.weight', 'h.0.fc.bias', 'h.1.fc.weight', 'h.1.fc.bias'].map((n) => grow(n, 1e-3, 1e-2));
  const model: GradientFlowModel = {
    summary: 'ok',
    rows,
    verdicts: [],
    moment: { when: 'pause', changed: 5, text: 'Values at the pause: what `optimizer.step()` uses.' },
    groups: [
      { path: 'h.0', type: 'Block', first: 1, count: 2, folded: true, flagged: 0, tone: null, meanAbs: 1e-3, maxAbs: 1e-2, norm: 0.5 },
      { path: 'h.1', type: 'Block', first: 3, count: 2, folded: false, flagged: 1, tone: 'warning', meanAbs: 1e-3, maxAbs: 1e-2, norm: null },
      { path: 'bad', type: 'Block', first: 4, count: 9, folded: true, flagged: 0, tone: null, meanAbs: null, maxAbs: null, norm: null },
    ],
  };
  const v = page<GradientFlowPage>(gradientFlowPage(model, CTX), 'gradientFlow');
  assert.deepEqual(v.groups.map((g) => [g.path, g.first, g.count, g.folded, g.tone]), [
    ['h.0', 1, 2, true, null],
    ['h.1', 3, 2, false, 'warning'],
  ]);
  assert.deepEqual(v.rows.map((r) => r.group), [null, 0, 0, 1, 1]);
  assert.equal(v.groups[0].mean.kind, 'value');
  assert.equal(v.groups[0].norm, '0.5');
  assert.equal(v.groups[1].norm, '—');
  assert.ok(v.groups[1].label.includes('1 flagged'));
  assert.deepEqual(v.moment, [
    { text: 'Values at the pause: what ', code: false },
    { text: 'optimizer.step()', code: true },
    { text: ' uses.', code: false },
  ]);
});

test('shapeTracePage: a block row carries its fold; others none', () => {
  const model = {
    summary: 's',
    failedModule: null,
    error: null,
    rows: [
      { path: '', type: 'GPT', depth: 0, inputs: [], outputs: [], params: 1, dtypeChange: false, deviceChange: false, failed: false, location: null },
      { path: 'h.0', type: 'Block', depth: 1, inputs: [], outputs: [], params: 1, dtypeChange: false, deviceChange: false, failed: false, location: null, fold: { rows: 1, folded: true } },
      { path: 'h.0.fc', type: 'Linear', depth: 2, inputs: [], outputs: [], params: 1, dtypeChange: false, deviceChange: false, failed: false, location: null, fold: { rows: 0, folded: true } },
    ],
  };
  const v = page<ShapeTracePage>(shapeTracePage(model, CTX), 'shapeTrace');
  assert.deepEqual(v.rows.map((r) => r.fold), [null, { rows: 1, folded: true }, null]);
});
