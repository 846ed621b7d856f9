/**
 * The training monitor's channel server, one per debug session: TCP on 127.0.0.1 (a port the
 * system picks), a random 32-hex token. A connection's first line must be the hello with that
 * token, within HELLO_TIMEOUT_MS, or it is closed; then newline-delimited JSON batches go into
 * the session's RunStore. Reading never waits on the view (the view reads the store on its own
 * clock), so a slow view never backs up into the debuggee; the recorder drops and counts on its
 * side when we are gone. Lines over MAX_LINE_BYTES close the connection; lines that are not
 * JSON are counted and skipped. Data only: nothing that arrives is run. No `vscode` import.
 */
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import { RunStore } from './runStore';
import { Hello, MAX_LINE_BYTES, parseHello, parseMessage } from './wire';

export const HELLO_TIMEOUT_MS = 10_000;
/** Connections at once (DDP ranks, a restarted child); the first hello of rank 0 or none feeds the store. */
export const MAX_CONNECTIONS = 16;

export interface ChannelAddress {
  host: string;
  port: number;
  token: string;
}

export interface ChannelEvents {
  /** The store changed (a batch, a hello, the end line). */
  onData?: () => void;
  /** Something to write in the log. */
  onLog?: (message: string) => void;
}

export class ChannelServer {
  readonly token = randomBytes(16).toString('hex');
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private feeder: net.Socket | undefined;
  /** Lines refused: not JSON, not a known message. */
  badLines = 0;
  /** Connections closed for a wrong or missing token. */
  refused = 0;

  constructor(
    readonly store: RunStore,
    private readonly events: ChannelEvents = {},
  ) {}

  /** Listen on 127.0.0.1 and a free port. */
  async start(): Promise<ChannelAddress> {
    const server = net.createServer((s) => this.accept(s));
    this.server = server;
    server.maxConnections = MAX_CONNECTIONS;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    server.on('error', (err) => this.events.onLog?.(`monitor channel: ${err.message}`));
    const addr = server.address() as net.AddressInfo;
    return { host: '127.0.0.1', port: addr.port, token: this.token };
  }

  /** Stop listening and close every connection. */
  close(): void {
    for (const s of this.sockets) {
      s.destroy();
    }
    this.sockets.clear();
    this.server?.close();
    this.server = undefined;
  }

  private accept(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.setEncoding('utf8');
    socket.setNoDelay(true);
    /** The start of a line not yet ended (its newline is in a later chunk). */
    let pending = '';
    let hello: Hello | undefined;
    const timer = setTimeout(() => {
      if (!hello) {
        this.refuse(socket, 'no hello in time');
      }
    }, HELLO_TIMEOUT_MS);
    socket.on('data', (chunk: string) => {
      let start = 0;
      let nl: number;
      while ((nl = chunk.indexOf('\n', start)) >= 0) {
        const line = pending + chunk.slice(start, nl);
        pending = '';
        start = nl + 1;
        if (!line.trim()) {
          continue;
        }
        if (!hello) {
          hello = parseHello(line, this.token);
          if (!hello) {
            this.refuse(socket, 'a first line without the session token');
            return;
          }
          clearTimeout(timer);
          this.greet(socket, hello);
          continue;
        }
        this.line(socket, line);
      }
      pending += chunk.slice(start);
      if (pending.length > MAX_LINE_BYTES) {
        this.refuse(socket, `a line over ${MAX_LINE_BYTES} bytes`);
      }
    });
    socket.on('error', () => undefined); // the debuggee went away: close below
    socket.on('close', () => {
      clearTimeout(timer);
      this.sockets.delete(socket);
      if (this.feeder === socket) {
        this.feeder = undefined;
      }
    });
  }

  private greet(socket: net.Socket, hello: Hello): void {
    if (!this.feeder && (hello.rank === null || hello.rank === 0)) {
      this.feeder = socket;
      this.store.setHello(hello);
      this.events.onLog?.(`monitor channel: pid ${hello.pid ?? '?'} connected (${hello.script ?? 'no script'})`);
      this.events.onData?.();
    }
  }

  private line(socket: net.Socket, line: string): void {
    if (socket !== this.feeder) {
      return; // another rank: connected, not drawn
    }
    const msg = parseMessage(line);
    if (!msg) {
      if (this.badLines++ === 0) {
        this.events.onLog?.(`monitor channel: skipped a line that is not a batch: ${line.slice(0, 120)}`);
      }
      return;
    }
    if (msg.kind === 'batch') {
      this.store.addBatch(msg.batch);
    } else {
      this.store.end(msg.steps, msg.dropped);
    }
    this.events.onData?.();
  }

  private refuse(socket: net.Socket, why: string): void {
    this.refused++;
    this.events.onLog?.(`monitor channel: closed a connection: ${why}`);
    socket.destroy();
  }
}
