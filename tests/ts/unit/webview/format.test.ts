// Numbers, shapes and prose as every page spells them (extension/src/webview/format.ts).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { activationText } from '../../../../extension/src/views/shapeTracePage';
import { formatMagnitude, plainText, splitInlineCode } from '../../../../extension/src/webview/format';

test('inline code: backticks become code parts, unbalanced ones stay text', () => {
  assert.deepEqual(splitInlineCode('The gradient of `act.beta` is wrong'), [
    { text: 'The gradient of ', code: false },
    { text: 'act.beta', code: true },
    { text: ' is wrong', code: false },
  ]);
  assert.deepEqual(splitInlineCode('a ` b'), [{ text: 'a ` b', code: false }]);
  assert.deepEqual(splitInlineCode('<img src=x onerror=alert(1)>'), [{ text: '<img src=x onerror=alert(1)>', code: false }]);
  assert.deepEqual(splitInlineCode(''), []);
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

test('activationText and plainText', () => {
  assert.equal(activationText({ mean: -0.0123, std: 1.02, zeros: 0.734, nonFinite: 0 }), 'mean -0.0123 · std 1.02 · zeros 73.4%');
  assert.equal(activationText({ mean: 1, std: 0, zeros: 1, nonFinite: 4 }), 'mean 1 · std 0 · zeros 100% · 4 NaN/Inf');
  assert.equal(activationText({ mean: null, std: null, zeros: 0, nonFinite: true }), 'NaN/Inf');
  assert.equal(activationText(null), '');
  assert.equal(plainText('`fc1` (Linear) is dead'), 'fc1 (Linear) is dead');
});
