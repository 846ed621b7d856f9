import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as net from 'node:net';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { ChannelServer } from '../../../../extension/src/monitor/channelServer';
import { JobStore } from '../../../../extension/src/monitor/jobStore';
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
  const job = new JobStore('test', Date.now());
  let updates = 0;
  const logs: string[] = [];
  const server = new ChannelServer(job, { onData: () => updates++, onLog: (m) => logs.push(m) });
  const address = await server.start();
  // Rank 0's store (a single process is rank 0): made at its connection's first batch.
  const store = () => job.store(0) ?? new RunStore('no batch yet', 0);
  return { job, store, server, address, logs, updates: () => updates };
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
    await until(() => store().endSteps !== null);
    assert.equal(store().steps, 1000);
    assert.equal(store().lastStep, 999);
    assert.equal(store().evals.steps, 10);
    assert.equal(store().user.get('accuracy')!.steps, 1000);
    assert.equal([...store().findings.values()].find((f) => f.kind === 'overfitting')!.where!.line, 12);
    assert.equal(store().dropped, 3);
    assert.equal(store().info.hello!.script, '/ws/train.py');
    assert.equal(store().info.state, 'running');
    assert.ok(updates() >= 20, `${updates()} updates for 20 batches + hello + end`);
  } finally {
    server.close();
  }
});

test('the wrong token: the connection is closed and nothing reaches the store', async () => {
  const { job, server, address, logs } = await serve();
  try {
    send(address, 'f'.repeat(32) === address.token ? 'e'.repeat(32) : 'f'.repeat(32), 100);
    await until(() => server.refused === 1);
    assert.deepEqual(job.ranks, []);
    assert.ok(logs.some((l) => l.includes('without the session token')));
  } finally {
    server.close();
  }
});

test('a line that is not JSON is skipped and counted; the rest still arrives', async () => {
  const { store, server, address } = await serve();
  try {
    send(address, address.token, 120, '--garbage');
    await until(() => store().endSteps !== null);
    assert.equal(server.badLines, 1);
    assert.equal(store().steps, 120);
  } finally {
    server.close();
  }
});

test('a line over the size limit closes the connection', async () => {
  const { job, server, address } = await serve();
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
    assert.deepEqual(job.ranks, [], 'a connection that sent no batch feeds no rank');
  } finally {
    server.close();
  }
});

test('every rank feeds its own store; a second connection of a rank and a rank-less hello that never steps do not', async () => {
  const { job, store, server, address } = await serve();
  try {
    const hello = (rank: number | null) =>
      JSON.stringify({ hello: { token: address.token, pid: 100 + (rank ?? 50), rank, world_size: 2, script: null, version: 1 } }) + '\n';
    const batch = (s: number) => JSON.stringify({ batch: { steps: [{ step: s, loss: 1 }], evals: [], user: [], findings: [], dropped: 0 } }) + '\n';
    // The torchrun agent: it imports torch, says hello without a rank, sends only its end line.
    const agent = net.connect(address.port, address.host);
    agent.write(hello(null) + JSON.stringify({ end: { steps: 0, dropped: 0 } }) + '\n');
    await new Promise((ok) => setTimeout(ok, 100));
    const one = net.connect(address.port, address.host);
    one.write(hello(1) + batch(500));
    const zero = net.connect(address.port, address.host);
    zero.write(hello(0) + batch(7));
    await until(() => job.ranks.length === 2);
    const again = net.connect(address.port, address.host);
    again.write(hello(1) + batch(501));
    await new Promise((ok) => setTimeout(ok, 100));
    assert.deepEqual(job.ranks, [0, 1]);
    assert.equal(job.world, 2);
    assert.equal(store().lastStep, 7);
    assert.equal(store().info.hello!.pid, 100);
    assert.equal(store().endSteps, null, "the agent's end line is not rank 0's");
    assert.equal(job.store(1)!.lastStep, 500, 'the second connection of rank 1 is not drawn');
    assert.equal(job.store(1)!.info.hello!.pid, 101);
    for (const s of [agent, one, zero, again]) {
      s.destroy();
    }
  } finally {
    server.close();
  }
});

test('two real rank processes, rank 1 the straggler: the job compares every step and names rank 1', async () => {
  const { job, server, address } = await serve();
  try {
    const ranks = [
      spawn(PYTHON, [SENDER, address.host, String(address.port), address.token, '200', '--rank', '0', '--world', '2', '--wait', '0.05']),
      spawn(PYTHON, [SENDER, address.host, String(address.port), address.token, '200', '--rank', '1', '--world', '2', '--extra', '0.05']),
    ];
    await Promise.all(ranks.map((p) => new Promise((ok) => p.once('exit', ok))));
    await until(() => job.ranks.every((r) => job.store(r)!.endSteps !== null) && job.ranks.length === 2);
    const s = job.stragglers.summary()!;
    assert.equal(s.steps, 200, 'every step reported by both ranks is compared');
    assert.equal(s.rank, 1);
    assert.equal(s.share, 1);
    assert.ok(s.slowest > s.others);
  } finally {
    server.close();
  }
});
