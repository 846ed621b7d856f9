/**
 * One lifecycle operation at a time (start, stop, restart of the backend).
 *
 * Two restarts can be asked for at once: granting Workspace Trust fires both the trust event and a
 * configuration change (`torchDoctor.python`'s workspace value starts to count). Unserialized, the
 * second `stop()` found no client (the first had cleared it and was still in its preflight), so
 * both `start()`s created a language client: two backends, and every CodeLens shown twice.
 */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();

  /** Run `op` after every operation queued before it; its own failure does not block the next. */
  run(op: () => Promise<void>): Promise<void> {
    const next = this.tail.then(op, op);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
