import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  classifyEvaluateError,
  dumpExpression,
  isSimpleReference,
  lastTracebackLine,
  MESSAGES,
  snapshotStatus,
  SnapshotSession,
  SnapshotTaker,
  unquotePythonStr,
} from '../../../../extension/src/debug/debugSnapshot';

const ROOT = mkdtempSync(join(tmpdir(), 'td-snapshot-test-'));
after(() => rmSync(ROOT, { recursive: true, force: true }));

/** The file path inside a dump expression (the first argument, a JSON string literal). */
function pathOf(expression: string): string {
  const m = /\.dump\(("(?:[^"\\]|\\.)*")/.exec(expression);
  assert.ok(m, `no path in ${expression}`);
  return JSON.parse(m[1]) as string;
}

type Evaluate = (expression: string, args: Record<string, unknown>) => unknown;

/** A paused debugpy as far as the snapshot needs: threads, stackTrace, evaluate. */
function fakeSession(evaluate: Evaluate, opts: { threads?: number[]; frames?: Record<number, number> } = {}) {
  const requests: { command: string; args: Record<string, unknown> }[] = [];
  const session: SnapshotSession = {
    id: 's1',
    type: 'torchdoctor',
    name: 'Train',
    customRequest(command: string, args?: unknown) {
      const a = (args ?? {}) as Record<string, unknown>;
      requests.push({ command, args: a });
      const run = async () => {
        switch (command) {
          case 'threads':
            return { threads: (opts.threads ?? [1]).map((id) => ({ id, name: `t${id}` })) };
          case 'stackTrace': {
            const frame = (opts.frames ?? { 1: 7 })[a.threadId as number];
            return { stackFrames: frame === undefined ? [] : [{ id: frame, name: 'f', line: 1 }] };
          }
          case 'evaluate':
            return evaluate(a.expression as string, a);
          default:
            throw new Error(`unexpected ${command}`);
        }
      };
      return run();
    },
  };
  return { session, requests };
}

function okSnapshot(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema: 'torchdoctor.snapshot',
    version: 1,
    status: 'ok',
    message: 'TinyCNN: forward 3, 5 module calls',
    model: { type: 'TinyCNN', passNumber: 3 },
    calls: [],
    parameters: [],
    ...extra,
  };
}

test('a paused session: dump in the top frame, read the JSON, delete the file', async () => {
  let written = '';
  const { session, requests } = fakeSession((expression) => {
    written = pathOf(expression);
    writeFileSync(written, JSON.stringify(okSnapshot()));
    return { result: "'ok 5 modules 4 params'", type: 'str', variablesReference: 0 };
  });
  const taker = new SnapshotTaker({ tmpRoot: ROOT });
  const out = await taker.take(session, 1);
  assert.ok(out.ok, JSON.stringify(out));
  assert.equal(out.status, 'ok 5 modules 4 params');
  assert.equal(out.frameId, 7);
  assert.equal((out.snapshot as { model: { type: string } }).model.type, 'TinyCNN');
  assert.equal(out.text, JSON.stringify(okSnapshot()), 'the file text as written');
  assert.ok(!existsSync(written), 'the snapshot file is deleted');
  const evaluate = requests.find((r) => r.command === 'evaluate')!;
  assert.equal(evaluate.args.context, 'repl');
  assert.equal(evaluate.args.frameId, 7);
  assert.match(evaluate.args.expression as string, /^__import__\('torchdoctor\.runtime\.snapshot', fromlist=\['_'\]\)\.dump\("/);
  // the private directory: under the root, 0700, one per taker
  const dir = await taker.directory();
  assert.equal(join(dir, '..'), ROOT);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.equal(written.startsWith(dir), true);
  taker.dispose();
  assert.ok(!existsSync(dir), 'dispose removes the directory');
});

test('without a thread id, the first thread with a frame is used', async () => {
  const { session, requests } = fakeSession(
    (expression) => {
      writeFileSync(pathOf(expression), JSON.stringify(okSnapshot()));
      return { result: "'ok'" };
    },
    { threads: [4, 9], frames: { 9: 33 } },
  );
  const taker = new SnapshotTaker({ tmpRoot: ROOT });
  const out = await taker.take(session);
  assert.ok(out.ok);
  assert.equal(out.threadId, 9);
  assert.equal(out.frameId, 33);
  assert.deepEqual(
    requests.map((r) => r.command),
    ['threads', 'stackTrace', 'stackTrace', 'evaluate'],
  );
  taker.dispose();
});

test('no thread with a frame: not paused, and nothing is evaluated', async () => {
  const { session, requests } = fakeSession(() => assert.fail('evaluated'), { threads: [], frames: {} });
  const taker = new SnapshotTaker({ tmpRoot: ROOT });
  const out = await taker.take(session);
  assert.ok(!out.ok);
  assert.equal(out.problem, 'not-paused');
  assert.equal(out.message, MESSAGES.notPaused);
  assert.ok(!requests.some((r) => r.command === 'evaluate'));
  taker.dispose();
});

test('evaluate errors are classified: running thread, missing runtime, anything else verbatim', async () => {
  const cases: [string, string, string][] = [
    ['Unable to find thread for evaluation.', 'not-paused', MESSAGES.notPaused],
    [
      "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nModuleNotFoundError: No module named 'torchdoctor'\n",
      'no-runtime',
      MESSAGES.noRuntime,
    ],
    [
      "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nModuleNotFoundError: No module named 'torchdoctor.runtime.snapshot'\n",
      'no-runtime',
      MESSAGES.noRuntime,
    ],
    [
      'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n  File "/x/prog.py", line 8, in boom\n    raise ValueError("bad thing")\nValueError: bad thing\nsecond line\n',
      'evaluate-error',
      'ValueError: bad thing\nsecond line',
    ],
  ];
  for (const [message, problem, shown] of cases) {
    const { session } = fakeSession(() => {
      throw new Error(message);
    });
    const taker = new SnapshotTaker({ tmpRoot: ROOT });
    const out = await taker.take(session, 1);
    assert.ok(!out.ok);
    assert.equal(out.problem, problem, message);
    assert.equal(out.message, shown);
    assert.equal(out.detail, message);
    assert.deepEqual(readdirSync(await taker.directory()), [], 'no file left behind');
    taker.dispose();
  }
});

test("the runtime's own statuses: empty is no model, inactive is no runtime, error says why", async () => {
  const cases: [Record<string, unknown>, string, string, RegExp][] = [
    [{ status: 'empty', message: 'no model seen yet: pause after the first forward' }, "'empty: no model seen yet'", 'no-model', /No model has run a forward pass yet/],
    [{ status: 'inactive', message: 'the collection is not running in this program' }, "'inactive: the collection'", 'no-runtime', /runtime is not loaded/],
    [{ status: 'error', message: 'the snapshot failed: RuntimeError: boom' }, "'error: the snapshot failed'", 'evaluate-error', /could not take the snapshot: the snapshot failed: RuntimeError: boom/],
  ];
  for (const [envelope, result, problem, message] of cases) {
    const { session } = fakeSession((expression) => {
      writeFileSync(pathOf(expression), JSON.stringify(okSnapshot(envelope)));
      return { result };
    });
    const taker = new SnapshotTaker({ tmpRoot: ROOT });
    const out = await taker.take(session, 1);
    assert.ok(!out.ok);
    assert.equal(out.problem, problem);
    assert.match(out.message, message);
    taker.dispose();
  }
});

test('no file: a failed write is an error, an "ok" means the debuggee is elsewhere', async () => {
  const taker = new SnapshotTaker({ tmpRoot: ROOT });
  const failed = fakeSession(() => ({ result: "'error: cannot write /tmp/x: PermissionError: denied'" }));
  const a = await taker.take(failed.session, 1);
  assert.ok(!a.ok);
  assert.equal(a.problem, 'evaluate-error');
  assert.match(a.message, /cannot write \/tmp\/x: PermissionError: denied/);
  const remote = fakeSession(() => ({ result: "'ok 3 modules 2 params'" }));
  const b = await taker.take(remote.session, 1);
  assert.ok(!b.ok);
  assert.equal(b.problem, 'no-file');
  assert.match(b.message, /another machine or in a container/);
  taker.dispose();
});

test('a file over the size limit is not read, and is deleted', async () => {
  let written = '';
  const { session } = fakeSession((expression) => {
    written = pathOf(expression);
    writeFileSync(written, JSON.stringify(okSnapshot({ padding: 'x'.repeat(4096) })));
    return { result: "'ok'" };
  });
  const taker = new SnapshotTaker({ tmpRoot: ROOT, maxBytes: 1024 });
  const out = await taker.take(session, 1);
  assert.ok(!out.ok);
  assert.equal(out.problem, 'too-large');
  assert.match(out.message, /^The snapshot is 0\.0 MB, over the 0\.0 MB limit/);
  assert.ok(!existsSync(written));
  taker.dispose();
});

test('a file that is not JSON (or not an object) is reported, not thrown', async () => {
  for (const content of ['{"status": "ok", trunc', '[1, 2]', 'null']) {
    const { session } = fakeSession((expression) => {
      writeFileSync(pathOf(expression), content);
      return { result: "'ok'" };
    });
    const taker = new SnapshotTaker({ tmpRoot: ROOT });
    const out = await taker.take(session, 1);
    assert.ok(!out.ok);
    assert.equal(out.problem, 'unreadable', content);
    taker.dispose();
  }
});

test('a debuggee that never answers times out', async () => {
  const { session } = fakeSession(() => new Promise(() => undefined));
  const taker = new SnapshotTaker({ tmpRoot: ROOT, timeoutMs: 30 });
  const out = await taker.take(session, 1);
  assert.ok(!out.ok);
  assert.equal(out.problem, 'timeout');
  assert.match(out.message, /did not answer within 0 s/);
  taker.dispose();
});

test('a picked model goes to dump() as its second argument; out of scope, the default is taken', async () => {
  const expressions: string[] = [];
  const { session } = fakeSession((expression) => {
    expressions.push(expression);
    if (expression.endsWith(', trainer.model)')) {
      throw new Error("Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nNameError: name 'trainer' is not defined\n");
    }
    writeFileSync(pathOf(expression), JSON.stringify(okSnapshot()));
    return { result: "'ok'" };
  });
  const taker = new SnapshotTaker({ tmpRoot: ROOT });
  const out = await taker.take(session, 1, 'trainer.model');
  assert.ok(out.ok);
  assert.equal(expressions.length, 2);
  assert.match(expressions[0], /\.dump\("[^"]+", trainer\.model\)$/);
  assert.match(expressions[1], /\.dump\("[^"]+"\)$/);
  // an expression that is not a plain reference is never evaluated
  expressions.length = 0;
  const out2 = await taker.take(session, 1, '__import__("os").system("x")');
  assert.ok(out2.ok);
  assert.equal(expressions.length, 1);
  assert.match(expressions[0], /\.dump\("[^"]+"\)$/);
  taker.dispose();
});

test('dumpExpression quotes any path as a JSON (and Python) string literal', () => {
  for (const p of ['/tmp/a b/snap.json', 'C:\\Users\\me\\AppData\\Local\\Temp\\x.json', '/tmp/quote"and\'/x', '/tmp/ünï/\n.json']) {
    const e = dumpExpression(p);
    assert.equal(pathOf(e), p);
    assert.ok(!e.includes('\n'), 'one line');
  }
  assert.throws(() => dumpExpression('/x', 'a; b'));
  assert.equal(dumpExpression('/x', "models['enc']"), `__import__('torchdoctor.runtime.snapshot', fromlist=['_']).dump("/x", models['enc'])`);
});

test('isSimpleReference accepts names, attributes and plain subscripts only', () => {
  for (const ok of ['model', 'self.net', 'models[0]', 'nets[-1]', "nets['enc']", 'nets["dec oder"]', 'a.b[2].c']) {
    assert.ok(isSimpleReference(ok), ok);
  }
  for (const bad of ['', '1x', 'a()', 'a + b', 'a;b', "a['x')]", 'a\nb', '__import__("os")', 'a[b]', "a['x\\'']", 'lambda: 0']) {
    assert.ok(!isSimpleReference(bad), bad);
  }
});

test('unquotePythonStr reads the repr debugpy answers for a str', () => {
  assert.equal(unquotePythonStr("'ok 3 modules 4 params'"), 'ok 3 modules 4 params');
  assert.equal(unquotePythonStr('"it\'s"'), "it's");
  assert.equal(unquotePythonStr("'a\\'b\\\\c\\nd\\x41\\u00e9'"), "a'b\\c\nd" + 'A' + 'é');
  assert.equal(unquotePythonStr('None'), 'None');
  assert.equal(unquotePythonStr("r'\\d'"), '\\d');
});

test('snapshotStatus reads the envelope, or the status line without one', () => {
  assert.deepEqual(snapshotStatus({ status: 'empty', message: 'm' }, 'x'), { status: 'empty', message: 'm' });
  assert.deepEqual(snapshotStatus(null, 'inactive: not running'), { status: 'inactive', message: 'not running' });
  assert.deepEqual(snapshotStatus(null, 'ok 3 modules 2 params'), { status: 'ok', message: '3 modules 2 params' });
  assert.deepEqual(snapshotStatus(null, ''), { status: 'empty', message: '' });
  assert.equal(snapshotStatus(null, 'what').status, 'unknown');
});

test('classifyEvaluateError and lastTracebackLine', () => {
  assert.equal(classifyEvaluateError('Server[pid=1] disconnected unexpectedly').problem, 'not-paused');
  assert.equal(classifyEvaluateError('').problem, 'evaluate-error');
  assert.equal(lastTracebackLine('plain message'), 'plain message');
  assert.equal(lastTracebackLine('Traceback (most recent call last):\n  File "x", line 1\nKeyError: 3\n'), 'KeyError: 3');
});
