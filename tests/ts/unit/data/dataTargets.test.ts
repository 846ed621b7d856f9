// Which data "Check Data" runs on from the palette (extension/src/data/dataTargets.ts).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import type { DataTarget } from '../../../../extension/src/data/dataProtocol';
import { pausedDumpExpression, targetAtCursor, variableArg } from '../../../../extension/src/data/dataTargets';

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

test('while paused: the expression names the variable, the JSON-quoted file and the mode, nothing else', () => {
  assert.equal(
    pausedDumpExpression('batch', '/tmp/td-x/data-1.json', 'images'),
    `__import__('torchdoctor.data_checks.paused', fromlist=['_']).dump(batch, "/tmp/td-x/data-1.json", 'images', "batch")`,
  );
  assert.match(pausedDumpExpression("self.loaders['train']", '/tmp/a b.json', 'data'), /\.dump\(self\.loaders\['train'\], "\/tmp\/a b\.json", 'data', "self\.loaders\['train'\]"\)$/);
  // the options as a Python dict literal: finite numbers only
  assert.equal(
    pausedDumpExpression('ds', '/tmp/f.json', 'data', { galleryImages: 128, budgetSeconds: 0 }),
    `__import__('torchdoctor.data_checks.paused', fromlist=['_']).dump(ds, "/tmp/f.json", 'data', "ds", {"galleryImages":128,"budgetSeconds":0})`,
  );
  assert.match(pausedDumpExpression('ds', '/tmp/f.json', 'data', { budgetSeconds: Number.NaN, galleryImages: 4 }), /, "ds", \{"galleryImages":4\}\)$/);
  assert.match(pausedDumpExpression('ds', '/tmp/f.json', 'data', {}), /, "ds"\)$/);
  assert.throws(() => pausedDumpExpression('os.system("x")', '/tmp/f.json', 'data'));
  assert.throws(() => pausedDumpExpression('a + b', '/tmp/f.json', 'data'));
  assert.deepEqual(variableArg({ sessionId: 's1', variable: { name: 'x', evaluateName: 'x' } }), { sessionId: 's1', evaluateName: 'x' });
  assert.deepEqual(variableArg(undefined), {});
  assert.deepEqual(variableArg({ variable: { evaluateName: 3 } }), { sessionId: undefined, evaluateName: undefined });
});
