// What the model-view pages may ask (extension/src/views/pageMessages.ts).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import type { GradientFlowModel, GradientFlowRow, ShapeTraceRow, TensorMeta } from '../../../../extension/src/protocol';
import { gradientFlowPage } from '../../../../extension/src/views/gradientFlowPage';
import { allowedTargets, parseModelPageMessage } from '../../../../extension/src/views/pageMessages';
import { shapeTracePage } from '../../../../extension/src/views/shapeTracePage';
import { messagePage } from '../../../../extension/src/views/statePages';

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
    // As the backend counts them (diagnosis/presentation.py; tests/python/unit/diagnosis/test_presentation.py).
    counts: { rows: 5, flagged: 2, error: 1, warning: 1, info: 0 },
  };
}

function srow(path: string, type: string, depth: number, inputs: TensorMeta[], outputs: TensorMeta[], params: number, extra: Partial<ShapeTraceRow> = {}): ShapeTraceRow {
  return { path, type, depth, inputs, outputs, params, dtypeChange: false, deviceChange: false, failed: false, location: { file: FILE, line: 5 + depth }, ...extra };
}

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
