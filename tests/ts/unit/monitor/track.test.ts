import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { Track } from '../../../../extension/src/monitor/track';

const limits = { recent: 8, buckets: 4 };

function rows(t: Track) {
  return [...t.rows()].map((r) => ({ first: r.first, last: r.last, n: r.count(0), min: r.min(0), max: r.max(0), last_: r.lastValue(0) }));
}

test('recent steps stay exact, one row each', () => {
  const t = new Track(['v'], limits);
  for (let i = 0; i < 5; i++) {
    t.push(i, [i * 10]);
  }
  assert.deepEqual(
    rows(t).map((r) => [r.first, r.last, r.last_]),
    [0, 1, 2, 3, 4].map((i) => [i, i, i * 10]),
  );
});

test('a long run keeps a bounded number of rows, and every step is counted once', () => {
  const t = new Track(['v'], limits);
  for (let i = 0; i < 100_000; i++) {
    t.push(i, [Math.sin(i)]);
  }
  assert.ok(t.rowCount <= limits.recent + limits.buckets, `rows ${t.rowCount}`);
  const counted = rows(t).reduce((s, r) => s + r.n, 0);
  assert.equal(counted, 100_000);
  assert.equal(t.steps, 100_000);
  // Rows cover the steps in order, without overlap.
  const rs = rows(t);
  for (let i = 1; i < rs.length; i++) {
    assert.ok(rs[i].first > rs[i - 1].last);
  }
  assert.equal(rs[0].first, 0);
  assert.equal(rs[rs.length - 1].last, 99_999);
});

test('a spike deep in the bucketed past survives in its bucket max', () => {
  const t = new Track(['loss'], limits);
  for (let i = 0; i < 10_000; i++) {
    t.push(i, [i === 1234 ? 1e6 : 1]);
  }
  const holder = rows(t).find((r) => r.first <= 1234 && 1234 <= r.last)!;
  assert.ok(holder.last - holder.first > 0, 'the spike is in a bucket, not an exact row');
  assert.equal(holder.max, 1e6);
  assert.equal(holder.min, 1);
});

test('missing values are not counted; a step that goes backwards is refused and counted', () => {
  const t = new Track(['a', 'b'], limits);
  t.push(0, [1, Number.NaN]);
  t.push(1, [2, undefined]);
  t.push(0, [9, 9]);
  assert.equal(t.outOfOrder, 1);
  assert.equal(t.hasColumn(1), false);
  assert.equal(t.hasColumn(0), true);
});

test('the same step twice adds to one row (two losses logged at one step)', () => {
  const t = new Track(['v'], limits);
  t.push(3, [1]);
  t.push(3, [3]);
  const [r] = rows(t);
  assert.deepEqual([r.n, r.min, r.max, r.last_], [2, 1, 3, 3]);
  assert.equal(t.steps, 1);
});
