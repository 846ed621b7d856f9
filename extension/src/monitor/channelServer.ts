/**
 * The training monitor's channel server, one per debug session: TCP on 127.0.0.1 (a port the
 * system picks), a random 32-hex token. A connection's first line must be the hello with that
 * token, within HELLO_TIMEOUT_MS, or it is closed; then newline-delimited JSON batches go into
 * the session's JobStore, under the rank the hello names (none: rank 0). A connection starts
 * feeding its rank at its first batch, not at its hello: under torchrun the agent process imports
 * torch too and says hello without a rank, but never steps, so it must not take rank 0's place;
 * while one connection feeds a rank, another of the same rank is not drawn. Reading never waits on the view (the view reads the store on its own
 * clock), so a slow view never backs up into the debuggee; the recorder drops and counts on its
 * side when we are gone. Lines over MAX_LINE_BYTES close the connection; lines that are not
 * JSON are counted and skipped. Data only: nothing that arrives is run. No `vscode` import.
 */
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import { JobStore, MAX_RANKS } from './jobStore';
import { Hello, MAX_LINE_BYTES, parseHello, parseMessage } from './wire';

export const HELLO_TIMEOUT_MS = 10_000;
/** Connections at once: every rank of a job, the torchrun agent, a restarted child. */
export const MAX_CONNECTIONS = MAX_RANKS + 8;

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
  /** Per rank, the connection that feeds its store. */
  private readonly feeders = new Map<number, net.Socket>();
  /** Connections of ranks beyond MAX_RANKS: read, not stored. */
  private readonly unstored = new WeakSet<net.Socket>();
  /** Lines refused: not JSON, not a known message. */
  badLines = 0;
  /** Connections closed for a wrong or missing token. */
  refused = 0;

  constructor(
    readonly job: JobStore,
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
          continue;
        }
        this.line(socket, hello, line);
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
      const rank = hello?.rank ?? 0;
      if (this.feeders.get(rank) === socket) {
        this.feeders.delete(rank);
      }
    });
  }

  /** Whether this connection feeds its rank: the first of that rank to send a batch does. */
  private feeds(socket: net.Socket, hello: Hello, claim: boolean): boolean {
    const rank = hello.rank ?? 0;
    const feeder = this.feeders.get(rank);
    if (feeder || !claim || this.unstored.has(socket)) {
      return feeder === socket;
    }
    if (!this.job.open(hello)) {
      this.unstored.add(socket);
      if (this.job.ignoredRanks === 1) {
        this.events.onLog?.(`monitor channel: rank ${rank} not drawn: the view keeps ${MAX_RANKS} ranks`);
      }
      return false;
    }
    this.feeders.set(rank, socket);
    const who = hello.rank === null ? '' : `rank ${rank}, `;
    this.events.onLog?.(`monitor channel: ${who}pid ${hello.pid ?? '?'} connected (${hello.script ?? 'no script'})`);
    return true;
  }

  private line(socket: net.Socket, hello: Hello, line: string): void {
    const msg = parseMessage(line);
    if (!msg) {
      if (this.badLines++ === 0) {
        this.events.onLog?.(`monitor channel: skipped a line that is not a batch: ${line.slice(0, 120)}`);
      }
      return;
    }
    if (!this.feeds(socket, hello, msg.kind === 'batch')) {
      return; // the torchrun agent's end line, or a second connection of a rank: not drawn
    }
    const rank = hello.rank ?? 0;
    if (msg.kind === 'batch') {
      this.job.addBatch(rank, msg.batch);
    } else {
      this.job.end(rank, msg.steps, msg.dropped);
    }
    this.events.onData?.();
  }

  private refuse(socket: net.Socket, why: string): void {
    this.refused++;
    this.events.onLog?.(`monitor channel: closed a connection: ${why}`);
    socket.destroy();
  }
}
