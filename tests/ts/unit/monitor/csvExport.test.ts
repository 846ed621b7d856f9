import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { CSV_HEADER, csvField, runCsv } from '../../../../extension/src/monitor/csvExport';
import { run } from './synthetic';

test('one row per series, metric and stored row; exact steps have count 1', () => {
  const store = run(200);
  store.addBatch({ steps: [], evals: [], user: [{ name: 'acc, top-1', step: 5, value: 0.5 }], findings: [], dropped: 0 });
  const lines = runCsv(store).trim().split('\n');
  assert.equal(lines[0], CSV_HEADER);
  const loss = lines.filter((l) => l.startsWith('opt0,loss,'));
  assert.equal(loss.length, 200);
  const [, , first, last, count, lastV, min, max, mean] = loss[7].split(',');
  assert.deepEqual([first, last, count], ['7', '7', '1']);
  assert.equal(lastV, min);
  assert.equal(min, max);
  assert.equal(Number(mean), Number(lastV));
  assert.equal(lines.filter((l) => l.startsWith('validation,loss,')).length, 2);
  assert.ok(lines.includes('"user:acc, top-1",value,5,5,1,0.5,0.5,0.5,0.5'));
  // Measured every 10 steps: 20 rows of update ratio, not 200.
  assert.equal(lines.filter((l) => l.startsWith('opt0,update_ratio0,')).length, 20);
});

test('fields are quoted when they must be', () => {
  assert.equal(csvField('plain'), 'plain');
  assert.equal(csvField('a,b'), '"a,b"');
  assert.equal(csvField('say "hi"'), '"say ""hi"""');
});
