/**
 * Noticing a backend that is alive but no longer answers (a stalled event loop, a deadlock).
 * The process has not exited, so the language client sees nothing wrong and the status bar would
 * say "ready" forever. Every `intervalMs` the monitor sends a cheap request (`torchDoctor/serverInfo`)
 * and waits `timeoutMs` for it; a miss is reported as `unresponsive`, an answer after misses as
 * `recovered`, and `hungAfter` misses in a row as `hung` (the backend then restarts it).
 * No `vscode` here: the tests drive it with plain promises and short times.
 */

export type PingEvent = 'unresponsive' | 'recovered' | 'hung';

export interface PingOptions {
  intervalMs: number;
  timeoutMs: number;
  hungAfter: number;
}

export const DEFAULT_PING: PingOptions = { intervalMs: 20_000, timeoutMs: 10_000, hungAfter: 3 };

export class PingMonitor {
  private timer: ReturnType<typeof setInterval> | undefined;
  private inFlight = false;
  private misses = 0;

  constructor(
    private readonly ping: () => Promise<unknown>,
    private readonly onEvent: (event: PingEvent, misses: number) => void,
    private readonly options: PingOptions = DEFAULT_PING,
  ) {}

  start(): void {
    this.stop();
    this.misses = 0;
    this.timer = setInterval(() => void this.tick(), this.options.intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** One ping; true when it was answered in time. A ping still waiting is not doubled. */
  async tick(): Promise<boolean> {
    if (this.inFlight) {
      return false;
    }
    this.inFlight = true;
    try {
      const answered = await withTimeout(this.ping(), this.options.timeoutMs);
      if (answered) {
        if (this.misses > 0) {
          this.onEvent('recovered', this.misses);
        }
        this.misses = 0;
        return true;
      }
      this.misses += 1;
      this.onEvent(this.misses >= this.options.hungAfter ? 'hung' : 'unresponsive', this.misses);
      if (this.misses >= this.options.hungAfter) {
        this.misses = 0; // the backend restarts it: count afresh
      }
      return false;
    } finally {
      this.inFlight = false;
    }
  }
}

/** Whether `promise` settles (resolves or rejects: an error answer is an answer) within `ms`. */
function withTimeout(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    promise.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(true);
      },
    );
  });
}
