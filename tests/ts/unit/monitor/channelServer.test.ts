import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as net from 'node:net';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { ChannelServer } from '../../../../extension/src/monitor/channelServer';
import { RunStore } from '../../../../extension/src/monitor/runStore';
import { MAX_LINE_BYTES } from '../../../../extension/src/monitor/wire';

// Bundled tests run from out/tests/<folder>/; `make test-ts` runs them from the repository root.
const SENDER = [resolve(__dirname, '../../../tests/ts/unit/fixtures'), resolve('tests/ts/unit/fixtures')]
  .map((d) => join(d, 'monitor_sender.py'))
  .find(existsSync)!;
const PYTHON = existsSync('.venv/bin/python') ? '.venv/bin/python' : 'python3';

function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const t0 = Date.now();
  return new Promise((ok, fail) => {
    const tick = () => (cond() ? ok() : Date.now() - t0 > ms ? fail(new Error('timed out')) : setTimeout(tick, 10));
    tick();
  });
}

async function serve() {
  const store = new RunStore('test', Date.now());
  let updates = 0;
  const logs: string[] = [];
  const server = new ChannelServer(store, { onData: () => updates++, onLog: (m) => logs.push(m) });
  const address = await server.start();
  return { store, server, address, logs, updates: () => updates };
}

function send(address: { host: string; port: number }, token: string, steps: number, ...extra: string[]) {
  const r = spawnSync(PYTHON, [SENDER, address.host, String(address.port), token, String(steps), ...extra], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

test('a real Python debuggee with the token: every step, evaluation, user point and finding arrives, then the end', async () => {
  const { store, server, address, updates } = await serve();
  try {
    assert.equal(address.host, '127.0.0.1');
    assert.match(address.token, /^[0-9a-f]{32}$/);
    send(address, address.token, 1000, '--batch', '50');
    await until(() => store.endSteps !== null);
    assert.equal(store.steps, 1000);
    assert.equal(store.lastStep, 999);
    assert.equal(store.evals.steps, 10);
    assert.equal(store.user.get('accuracy')!.steps, 1000);
    assert.equal([...store.findings.values()].find((f) => f.kind === 'overfitting')!.where!.line, 12);
    assert.equal(store.dropped, 3);
    assert.equal(store.info.hello!.script, '/ws/train.py');
    assert.equal(store.info.state, 'running');
    assert.ok(updates() >= 20, `${updates()} updates for 20 batches + hello + end`);
  } finally {
    server.close();
  }
});

test('the wrong token: the connection is closed and nothing reaches the store', async () => {
  const { store, server, address, logs } = await serve();
  try {
    send(address, 'f'.repeat(32) === address.token ? 'e'.repeat(32) : 'f'.repeat(32), 100);
    await until(() => server.refused === 1);
    assert.equal(store.steps, 0);
    assert.equal(store.info.hello, null);
    assert.ok(logs.some((l) => l.includes('without the session token')));
  } finally {
    server.close();
  }
});

test('a line that is not JSON is skipped and counted; the rest still arrives', async () => {
  const { store, server, address } = await serve();
  try {
    send(address, address.token, 120, '--garbage');
    await until(() => store.endSteps !== null);
    assert.equal(server.badLines, 1);
    assert.equal(store.steps, 120);
  } finally {
    server.close();
  }
});

test('a line over the size limit closes the connection', async () => {
  const { store, server, address } = await serve();
  try {
    const sock = net.connect(address.port, address.host);
    await new Promise((ok) => sock.once('connect', ok));
    sock.write(JSON.stringify({ hello: { token: address.token, pid: 1, rank: 0, script: null, version: 1 } }) + '\n');
    const closed = new Promise((ok) => sock.once('close', ok));
    sock.on('error', () => undefined);
    const chunk = 'x'.repeat(1 << 20);
    for (let sent = 0; sent <= MAX_LINE_BYTES + chunk.length && !sock.destroyed; sent += chunk.length) {
      sock.write(chunk);
    }
    await closed;
    assert.equal(server.refused, 1);
    assert.equal(store.info.hello!.pid, 1);
  } finally {
    server.close();
  }
});

test('a second rank connects but only rank 0 feeds the store', async () => {
  const { store, server, address } = await serve();
  try {
    const hello = (rank: number) => JSON.stringify({ hello: { token: address.token, pid: 100 + rank, rank, script: null, version: 1 } }) + '\n';
    const batch = (s: number) => JSON.stringify({ batch: { steps: [{ step: s, loss: 1 }], evals: [], user: [], findings: [], dropped: 0 } }) + '\n';
    const one = net.connect(address.port, address.host);
    one.write(hello(1) + batch(500));
    await new Promise((ok) => setTimeout(ok, 100));
    const zero = net.connect(address.port, address.host);
    zero.write(hello(0) + batch(7));
    await until(() => store.steps === 1);
    assert.equal(store.lastStep, 7);
    assert.equal(store.info.hello!.pid, 100);
    one.destroy();
    zero.destroy();
  } finally {
    server.close();
  }
});
