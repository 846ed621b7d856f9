// The model views' controller (extension/src/views/modelViews.ts) against a fake `vscode` module and
// a fake paused debugpy: stops → one snapshot → the backend → both panels; running, ended,
// no session, backend not ready; clicks only open files of the view.
import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import Module from 'node:module';
import { after, test } from 'node:test';

// ---------------------------------------------------------------------------------------------
// A fake of the parts of the vscode API the controller uses

type Listener<T> = (v: T) => void;

class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  event = (l: Listener<T>) => {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  };
  fire(v: T): void {
    for (const l of [...this.listeners]) {
      l(v);
    }
  }
  dispose(): void {
    this.listeners = [];
  }
}

interface FakePanel {
  viewType: string;
  title: string;
  posted: { type: string; view: Record<string, any> }[];
  html: string;
  reveals: number;
  send(message: unknown): void;
  close(): void;
  closed?: boolean;
}

const uri = (fsPath: string) => ({ fsPath, scheme: 'file', toString: () => `file://${fsPath}` });
const panels: FakePanel[] = [];
const commands = new Map<string, (...args: unknown[]) => unknown>();
const trackerFactories: { type: string; factory: { createDebugAdapterTracker(s: unknown): any } }[] = [];
const activeSession = new EventEmitter<unknown>();
const terminated = new EventEmitter<unknown>();
const opened: { file: string; line: number }[] = [];

const fakeVscode = {
  EventEmitter,
  ViewColumn: { One: 1, Two: 2, Beside: -2 },
  Uri: { file: uri, joinPath: (base: { fsPath: string }, ...parts: string[]) => uri([base.fsPath, ...parts].join('/')) },
  Position: class {
    constructor(
      public line: number,
      public character: number,
    ) {}
  },
  Range: class {
    constructor(
      public start: { line: number },
      public end: unknown,
    ) {}
  },
  commands: {
    registerCommand(id: string, fn: (...args: unknown[]) => unknown) {
      commands.set(id, fn);
      return { dispose: () => commands.delete(id) };
    },
  },
  debug: {
    activeDebugSession: undefined as unknown,
    registerDebugAdapterTrackerFactory(type: string, factory: { createDebugAdapterTracker(s: unknown): any }) {
      trackerFactories.push({ type, factory });
      return { dispose() {} };
    },
    onDidChangeActiveDebugSession: activeSession.event,
    onDidTerminateDebugSession: terminated.event,
  },
  window: {
    visibleTextEditors: [],
    showErrorMessage: async () => undefined,
    createWebviewPanel(viewType: string, title: string, show: { viewColumn: number; preserveFocus: boolean }) {
      // The first view opens beside the editor; the other shares its column (a tab each).
      const open = panels.filter((p) => !p.closed).length;
      assert.equal(show.viewColumn, open === 0 ? -2 : 2, open === 0 ? 'beside the editor' : "in the other view's column");
      assert.equal(show.preserveFocus, true);
      const received = new EventEmitter<unknown>();
      const disposed = new EventEmitter<void>();
      const webview = {
        html: '',
        cspSource: 'vscode-resource:',
        asWebviewUri: (u: { fsPath: string }) => ({ toString: () => `vscode-resource:${u.fsPath}` }),
        postMessage: async (m: { type: string; view: Record<string, any> }) => {
          fake.posted.push(m);
          return true;
        },
        onDidReceiveMessage: received.event,
      };
      const fake: FakePanel = {
        viewType,
        title,
        posted: [],
        get html() {
          return webview.html;
        },
        reveals: 0,
        send: (m) => received.fire(m),
        close: () => disposed.fire(),
      };
      disposed.event(() => {
        fake.closed = true;
      });
      panels.push(fake);
      return {
        webview,
        viewColumn: 2,
        onDidDispose: disposed.event,
        reveal: () => fake.reveals++,
        dispose: () => disposed.fire(),
      };
    },
    async showTextDocument(doc: { uri: { fsPath: string } }, opts: { selection: { start: { line: number } } }) {
      opened.push({ file: doc.uri.fsPath, line: opts.selection.start.line + 1 });
    },
  },
  workspace: {
    async openTextDocument(u: { fsPath: string }) {
      return { uri: u, lineCount: 50, lineAt: () => ({ text: '    self.fc = nn.Linear(4, 2)', firstNonWhitespaceCharacterIndex: 4 }) };
    },
  },
};

const loader = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const originalLoad = loader._load;
loader._load = function (request: string, ...rest: unknown[]) {
  return request === 'vscode' ? fakeVscode : originalLoad.call(this, request, ...rest);
};
// Loaded after the hook, so its `require('vscode')` gets the fake.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const views = require('../../../../extension/src/views/modelViews') as typeof import('../../../../extension/src/views/modelViews');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const protocol = require('../../../../extension/src/protocol') as typeof import('../../../../extension/src/protocol');

// ---------------------------------------------------------------------------------------------
// A paused debuggee and a backend

const FILE = '/ws/net.py';

function snapshotJson(): string {
  return JSON.stringify({ schema: 'torchdoctor.snapshot', version: 1, status: 'ok', message: 'Net: forward 3', model: { type: 'Net', passNumber: 3 } });
}

function makeSession(id: string, name = 'Train') {
  const evaluates: string[] = [];
  const session = {
    id,
    type: 'torchdoctor',
    name,
    running: false,
    customRequest: async (command: string, args: Record<string, any>) => {
      if (command === 'threads') {
        return { threads: [{ id: 1, name: 'MainThread' }] };
      }
      if (command === 'stackTrace') {
        return { stackFrames: [{ id: 11, name: '<module>', line: 3 }] };
      }
      assert.equal(command, 'evaluate');
      evaluates.push(args.expression);
      if (session.running) {
        throw new Error('Unable to find thread for evaluation.');
      }
      const path = JSON.parse(/\.dump\(("(?:[^"\\]|\\.)*")/.exec(args.expression)![1]) as string;
      writeFileSync(path, snapshotJson());
      return { result: "'ok 3 modules 2 params'", type: 'str' };
    },
  };
  const tracker = trackerFactories.find((f) => f.type === 'torchdoctor')!.factory.createDebugAdapterTracker(session);
  return {
    session,
    evaluates,
    stop(reason = 'breakpoint') {
      session.running = false;
      tracker.onDidSendMessage({ type: 'event', event: 'stopped', body: { threadId: 1, reason } });
    },
    resume() {
      session.running = true;
      tracker.onWillReceiveMessage({ type: 'request', command: 'continue', arguments: { threadId: 1 } });
    },
  };
}

const diagnoseCalls: unknown[] = [];
let invalid = false;
const backend = {
  ready: true,
  get languageClient() {
    return this.ready
      ? {
          sendRequest: async (method: string, sent: { snapshot: string }) => {
            assert.equal(method, protocol.DIAGNOSE_SNAPSHOT);
            assert.equal(typeof sent.snapshot, 'string', 'the file text, parsed once by the backend');
            const params = { snapshot: JSON.parse(sent.snapshot) as { model: { type: string } } };
            diagnoseCalls.push(params);
            if (invalid) {
              return { status: 'invalid', message: 'snapshot version 9 is not supported', gradientFlow: null, shapeTrace: null };
            }
            return {
              status: 'ok',
              message: 'Net: forward 3',
              gradientFlow: {
                summary: `Gradients of ${params.snapshot.model.type}.`,
                rows: [
                  {
                    name: 'fc.weight',
                    module: 'fc',
                    type: 'Linear',
                    meanAbs: 1e-3,
                    maxAbs: 1e-2,
                    norm: 0.1,
                    nan: false,
                    inf: false,
                    flags: [],
                    location: { file: FILE, line: 7 },
                  },
                ],
                verdicts: [],
              },
              shapeTrace: { summary: 'Shapes.', failedModule: null, error: null, rows: [] },
            };
          },
        }
      : undefined;
  },
};

const context = { extensionUri: uri('/ext'), subscriptions: [] as { dispose(): void }[] };
const log = { info() {}, warn() {}, error() {} };
views.registerModelViews(context as never, backend as never, log as never);
after(() => {
  for (const d of context.subscriptions) {
    d.dispose();
  }
  loader._load = originalLoad;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const last = (p: FakePanel) => p.posted[p.posted.length - 1]?.view;
const panelOf = (viewType: string) => panels.filter((p) => p.viewType === viewType).pop()!;

// ---------------------------------------------------------------------------------------------

test('the commands, trackers for both debug types, and a CSP page with no data in it', async () => {
  assert.ok(commands.has(views.SHOW_GRADIENT_FLOW_COMMAND));
  assert.ok(commands.has(views.SHOW_SHAPE_TRACE_COMMAND));
  assert.deepEqual(trackerFactories.map((f) => f.type).sort(), ['debugpy', 'torchdoctor']);
  commands.get(views.SHOW_GRADIENT_FLOW_COMMAND)!();
  const p = panelOf('torchDoctor.gradientFlow');
  assert.equal(p.title, 'Gradient Flow');
  assert.match(p.html, /script-src 'nonce-[^']+'/);
  assert.match(p.html, /vscode-resource:\/ext\/extension\/media\/modelViewPage\.js/);
  assert.match(p.html, /vscode-resource:\/ext\/extension\/media\/gradientFlow\.css/);
  assert.equal(last(p).state, 'loading');
  await sleep(30);
  assert.equal(last(p).kind, 'message');
  assert.equal(last(p).state, 'no-session');
  // the command again reveals the same panel
  commands.get(views.SHOW_GRADIENT_FLOW_COMMAND)!();
  assert.equal(panels.filter((x) => x.viewType === 'torchDoctor.gradientFlow').length, 1);
  assert.equal(p.reveals, 1);
});

test('a stop takes one snapshot (debounced), asks the backend once, and fills both panels', async () => {
  commands.get(views.SHOW_SHAPE_TRACE_COMMAND)!();
  const gf = panelOf('torchDoctor.gradientFlow');
  const st = panelOf('torchDoctor.shapeTrace');
  const s = makeSession('a');
  s.stop();
  s.stop('step');
  s.stop('step'); // a burst of stops
  await sleep(350);
  assert.equal(s.evaluates.length, 1, 'one snapshot for the burst');
  assert.match(s.evaluates[0], /^__import__\('torchdoctor\.runtime\.snapshot', fromlist=\['_'\]\)\.dump\("[^"]+"\)$/);
  assert.equal(diagnoseCalls.length, 1);
  const g = last(gf);
  assert.equal(g.kind, 'gradientFlow');
  assert.deepEqual(g.summary, [{ text: 'Gradients of Net.', code: false }]);
  assert.match(g.subtitle, /^“Train” · Net, forward 3 · paused \(step\) at \d\d:\d\d:\d\d$/);
  assert.equal(g.banner, null);
  assert.equal(last(st).kind, 'message', 'no module calls: the empty page');
  assert.equal(last(st).state, 'empty');
});

test('running: the data stays with a banner; the next stop refreshes it', async () => {
  const gf = panelOf('torchDoctor.gradientFlow');
  const s = makeSession('b');
  s.stop();
  await sleep(350);
  assert.equal(last(gf).banner, null);
  s.resume();
  await sleep(500);
  assert.equal(last(gf).kind, 'gradientFlow');
  assert.equal(last(gf).banner.state, 'running');
  s.stop();
  await sleep(350);
  assert.equal(last(gf).banner, null);
  assert.equal(s.evaluates.length, 2);
});

test('a step answered by a stop quickly never shows "running"', async () => {
  const gf = panelOf('torchDoctor.gradientFlow');
  const s = makeSession('c');
  s.stop();
  await sleep(350);
  const before = gf.posted.length;
  s.resume();
  await sleep(50);
  s.stop('step');
  await sleep(350);
  assert.ok(!gf.posted.slice(before).some((m) => m.view.banner?.state === 'running'));
});

test('the session ends: the last data is shown, marked stale', async () => {
  const gf = panelOf('torchDoctor.gradientFlow');
  const s = makeSession('d');
  s.stop();
  await sleep(350);
  terminated.fire(s.session);
  assert.equal(last(gf).kind, 'gradientFlow');
  assert.deepEqual(last(gf).banner, { state: 'stale', text: 'The debug session ended; the last data is shown.' });
  gf.send({ type: 'refresh' });
  await sleep(30);
  assert.equal(last(gf).banner.state, 'stale', 'a refresh of an ended session keeps the stale data');
});

test('clicks open only files named by the view', async () => {
  const gf = panelOf('torchDoctor.gradientFlow');
  opened.length = 0;
  gf.send({ type: 'openLocation', file: FILE, line: 7 });
  gf.send({ type: 'openLocation', file: '/etc/passwd', line: 1 });
  gf.send({ type: 'openLocation', file: FILE }); // line missing: line 1
  gf.send({ type: 'eval', code: 'x' });
  await sleep(20);
  assert.deepEqual(opened, [
    { file: FILE, line: 7 },
    { file: FILE, line: 1 },
  ]);
});

test('ready: a reloaded page gets the latest view again', async () => {
  const gf = panelOf('torchDoctor.gradientFlow');
  const n = gf.posted.length;
  gf.send({ type: 'ready' });
  await sleep(5);
  assert.equal(gf.posted.length, n + 1);
  assert.deepEqual(gf.posted[n], gf.posted[n - 1]);
});

test('a program that runs when asked: "not paused"; a new session drops the old data', async () => {
  const gf = panelOf('torchDoctor.gradientFlow');
  const s = makeSession('e', 'Other');
  s.session.running = true;
  fakeVscode.debug.activeDebugSession = s.session;
  activeSession.fire(s.session);
  await sleep(350);
  assert.equal(last(gf).kind, 'message');
  assert.equal(last(gf).state, 'not-paused');
  assert.equal(last(gf).subtitle, '“Other” · running');
  fakeVscode.debug.activeDebugSession = undefined;
});

test('backend not ready: a clear page, and the debuggee was still asked only once', async () => {
  const gf = panelOf('torchDoctor.gradientFlow');
  backend.ready = false;
  const s = makeSession('f');
  s.stop();
  await sleep(350);
  assert.equal(last(gf).state, 'backend');
  assert.equal(s.evaluates.length, 1);
  backend.ready = true;
  gf.send({ type: 'refresh' });
  await sleep(60);
  assert.equal(last(gf).kind, 'gradientFlow');
});

test("the backend's own refusal (another snapshot version) is an error page with its words", async () => {
  const gf = panelOf('torchDoctor.gradientFlow');
  invalid = true;
  const s = makeSession('i');
  s.stop();
  await sleep(350);
  invalid = false;
  assert.equal(last(gf).state, 'error');
  assert.equal(last(gf).headline, 'The backend could not diagnose the snapshot: snapshot version 9 is not supported');
});

test('from the Variables view: that variable is the model for the session', async () => {
  const s = makeSession('g');
  s.stop();
  await sleep(350);
  commands.get(views.SHOW_GRADIENT_FLOW_COMMAND)!({ sessionId: 'g', container: {}, variable: { name: 'net', evaluateName: 'self.net' } });
  await sleep(60);
  assert.match(s.evaluates[s.evaluates.length - 1], /\.dump\("[^"]+", self\.net\)$/);
  commands.get(views.SHOW_GRADIENT_FLOW_COMMAND)!({ sessionId: 'g', variable: { evaluateName: 'os.system("x")' } });
  await sleep(60);
  assert.match(s.evaluates[s.evaluates.length - 1], /, self\.net\)$/, 'an expression is never taken as a model');
});

test('with every panel closed, a stop costs the debuggee nothing', async () => {
  for (const p of panels) {
    p.close();
  }
  const s = makeSession('h');
  s.stop();
  await sleep(300);
  assert.equal(s.evaluates.length, 0);
});
