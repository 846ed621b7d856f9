/**
 * How often a dead backend is restarted: at most `max` times within `windowMs`,
 * so a backend that dies at start-up does not loop forever.
 * Pure logic, no `vscode` import, unit-tested.
 */
export class RestartPolicy {
  private crashes: number[] = [];

  constructor(
    private readonly max: number,
    private readonly windowMs = 3 * 60 * 1000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Record a crash; true when one more restart is allowed. */
  recordCrash(): boolean {
    const t = this.now();
    this.crashes = this.crashes.filter((c) => t - c < this.windowMs);
    this.crashes.push(t);
    return this.crashes.length <= this.max;
  }

  /** Crashes counted in the current window. */
  get recentCrashes(): number {
    return this.crashes.length;
  }

  get limit(): number {
    return this.max;
  }

  reset(): void {
    this.crashes = [];
  }
}
