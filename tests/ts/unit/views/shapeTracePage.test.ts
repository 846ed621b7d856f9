// The shape-trace page (extension/src/views/shapeTracePage.ts), hand-made and real payloads.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import type { ShapeTraceModel } from '../../../../extension/src/protocol';
import { gradientFlowPage } from '../../../../extension/src/views/gradientFlowPage';
import { shapeTracePage, tensorShapeText } from '../../../../extension/src/views/shapeTracePage';
import type { MessagePage, ShapeTracePage } from '../../../../extension/src/views/viewTypes';
import { CTX, FILE, fixture, page, srow, t, text } from '../support/viewPayloads';

test('shapeText: tuples without thousands separators; a 1-d shape keeps its comma', () => {
  assert.equal(tensorShapeText(t([64, 1152])), '(64, 1152)');
  assert.equal(tensorShapeText(t([10])), '(10,)');
  assert.equal(tensorShapeText(t([])), '()');
  assert.equal(tensorShapeText(t(null)), '?');
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
    // As the backend counts them (diagnosis/presentation.py).
    counts: { modules: 5, changes: 3, flagged: 0 },
    uniform: '',
  };
  const v = page<ShapeTracePage>(shapeTracePage(model, CTX), 'shapeTrace');
  assert.deepEqual(v.summary, [], 'no sentence of its own: the summary is the backend\'s');
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
    uniform: 'All tensors float32 on cpu.',
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
  assert.deepEqual(v.summary, [], 'no sentence of its own: the summary is the backend\'s');
  assert.equal(v.uniform, 'All tensors float32 on cpu.', "the backend's note, drawn as given");
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

test('shapeText names a non-tensor by its type; the model that raised in its own code', () => {
  assert.equal(tensorShapeText({ shape: null, dtype: null, device: null, type: 'NoneType' }), 'None');
  assert.equal(tensorShapeText({ shape: null, dtype: null, device: null, type: 'int' }), 'int');
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

