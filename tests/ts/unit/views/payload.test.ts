// Checking the backend's view-model payload (extension/src/views/payload.ts).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { statValue } from '../../../../extension/src/views/payload';

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
