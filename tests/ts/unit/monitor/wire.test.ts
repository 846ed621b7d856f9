import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { parseBatch, parseFinding, parseHello, parseMessage, parseStep } from '../../../../extension/src/monitor/wire';

const TOKEN = 'a'.repeat(32);

test('the hello is accepted with the session token only', () => {
  const line = (token: unknown) => JSON.stringify({ hello: { token, pid: 7, rank: null, script: '/ws/t.py', version: 1 } });
  assert.deepEqual(parseHello(line(TOKEN), TOKEN), { pid: 7, rank: null, world_size: null, script: '/ws/t.py', version: 1 });
  const rank = JSON.stringify({ hello: { token: TOKEN, pid: 8, rank: 1, world_size: 2, script: null, version: 1 } });
  assert.deepEqual(parseHello(rank, TOKEN), { pid: 8, rank: 1, world_size: 2, script: null, version: 1 });
  assert.equal(parseHello(line('b'.repeat(32)), TOKEN), undefined);
  assert.equal(parseHello(line(TOKEN.slice(1)), TOKEN), undefined);
  assert.equal(parseHello(line(42), TOKEN), undefined);
  assert.equal(parseHello('{"batch": {}}', TOKEN), undefined);
  assert.equal(parseHello('not json', TOKEN), undefined);
});

test('a step keeps what is well formed and nulls the rest', () => {
  const s = parseStep({
    step: 5,
    series: 'opt1',
    loss: 'NaN',
    lr: [0.1, 'x'],
    grad_norm: 2,
    time: { data: 0.5, forward: 'slow' },
    cuda: { allocated: 10, reserved: null, peak: 30 },
  })!;
  assert.equal(s.step, 5);
  assert.equal(s.series, 'opt1');
  assert.equal(s.loss, null);
  assert.equal(s.lr[0], 0.1);
  assert.ok(Number.isNaN(s.lr[1]));
  assert.deepEqual(s.time, { data: 0.5 });
  assert.deepEqual(s.cuda, { allocated: 10, reserved: null, peak: 30 });
  assert.equal(parseStep({ step: 1.5 }), undefined);
  assert.equal(parseStep({ loss: 1 }), undefined);
  assert.equal(parseStep({ step: 1 })!.series, 'opt0');
});

test('a finding needs a kind and a sentence; a bad severity reads as a warning; a bad place as none', () => {
  assert.equal(parseFinding({ kind: 'loss_nan' }), undefined);
  const f = parseFinding({ kind: 'loss_nan', severity: 'fatal', step: 3, sentence: 'NaN', where: { path: '/a.py', line: 0 } })!;
  assert.equal(f.severity, 'warning');
  assert.equal(f.where, null);
  assert.deepEqual(parseFinding({ kind: 'k', severity: 'error', step: null, sentence: 's', where: { path: '/a.py', line: 3 } })!.where, {
    path: '/a.py',
    line: 3,
  });
});

test('messages: a batch, the end, and anything else refused', () => {
  const b = parseMessage(JSON.stringify({ batch: { steps: [{ step: 1 }, 'x'], evals: [{ step: 1, loss: 2 }, { step: 1 }], dropped: 4 } }))!;
  assert.equal(b.kind, 'batch');
  if (b.kind === 'batch') {
    assert.equal(b.batch.steps.length, 1);
    assert.deepEqual(b.batch.evals, [{ step: 1, loss: 2 }]);
    assert.equal(b.batch.dropped, 4);
  }
  assert.deepEqual(parseMessage('{"end": {"steps": 10, "dropped": 0}}'), { kind: 'end', steps: 10, dropped: 0 });
  assert.equal(parseMessage('{"exec": "import os"}'), undefined);
  assert.equal(parseMessage('[1, 2]'), undefined);
  assert.deepEqual(parseBatch({}).steps, []);
});
