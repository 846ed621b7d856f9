// Which data "Check Data" runs on from the palette (extension/src/data/dataTargets.ts).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import type { DataTarget } from '../../../../extension/src/data/dataProtocol';
import { targetAtCursor } from '../../../../extension/src/data/dataTargets';

const at = { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } };
function t(name: string, kind: DataTarget['kind']): DataTarget {
  return { name, kind, range: at, nameRange: at, initRequired: [] };
}

test('the target at the cursor wins, then torchdoctor_data(), then the only target', () => {
  const targets = [t('Shapes', 'class'), t('torchdoctor_data', 'hook')];
  assert.equal(targetAtCursor({ targets, containing: 'Shapes', hasHook: true }), 'Shapes');
  assert.equal(targetAtCursor({ targets, containing: null, hasHook: true }), 'torchdoctor_data');
  assert.equal(targetAtCursor({ targets: [t('Shapes', 'class')], containing: null, hasHook: false }), 'Shapes');
  assert.equal(targetAtCursor({ targets: [t('A', 'class'), t('b', 'function')], containing: null, hasHook: false }), undefined);
  assert.equal(targetAtCursor({ targets: [], containing: null, hasHook: false }), undefined);
});
