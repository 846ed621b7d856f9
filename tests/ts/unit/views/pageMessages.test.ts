// What the model-view pages may ask (extension/src/views/pageMessages.ts).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { gradientFlowPage } from '../../../../extension/src/views/gradientFlowPage';
import { allowedTargets, parseModelPageMessage } from '../../../../extension/src/views/pageMessages';
import { shapeTracePage } from '../../../../extension/src/views/shapeTracePage';
import { messagePage } from '../../../../extension/src/views/statePages';
import { CTX, gradientModel, srow } from '../support/viewPayloads';

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

