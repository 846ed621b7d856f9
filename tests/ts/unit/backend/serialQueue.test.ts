import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { SerialQueue } from '../../../../extension/src/backend/serialQueue';

const tick = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Backend's shape: stop() clears the client at once, start() creates one after a slow preflight. */
class FakeBackend {
  client: number | undefined;
  alive = new Set<number>();
  private made = 0;

  async stop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (c !== undefined) {
      await tick(5);
      this.alive.delete(c);
    }
  }

  async start(): Promise<void> {
    await tick(20); // resolveInterpreter + the preflight
    const c = ++this.made;
    this.alive.add(c);
    this.client = c;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }
}

test('two restarts at once without the queue leave two clients running (the trust-grant race)', async () => {
  const b = new FakeBackend();
  await b.start();
  await Promise.all([b.restart(), b.restart()]);
  assert.equal(b.alive.size, 2);
});

test('through the queue, two restarts at once leave one client', async () => {
  const b = new FakeBackend();
  const q = new SerialQueue();
  await q.run(() => b.start());
  await Promise.all([q.run(() => b.restart()), q.run(() => b.restart())]);
  assert.deepEqual([...b.alive], [b.client]);
});

test('operations run in the order asked, one at a time', async () => {
  const q = new SerialQueue();
  const order: string[] = [];
  let running = 0;
  const op = (name: string, ms: number) => async () => {
    running++;
    assert.equal(running, 1);
    order.push(`${name}>`);
    await tick(ms);
    order.push(`<${name}`);
    running--;
  };
  await Promise.all([q.run(op('a', 15)), q.run(op('b', 1)), q.run(op('c', 5))]);
  assert.deepEqual(order, ['a>', '<a', 'b>', '<b', 'c>', '<c']);
});

test('a failed operation rejects its own caller and does not block the next', async () => {
  const q = new SerialQueue();
  const failed = q.run(async () => {
    throw new Error('preflight exploded');
  });
  let ran = false;
  const next = q.run(async () => {
    ran = true;
  });
  await assert.rejects(failed, /preflight exploded/);
  await next;
  assert.equal(ran, true);
});
