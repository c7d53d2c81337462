/**
 * The time by which a piece of work must be done, handed down a call so that every wait inside it
 * stops there: a step's page loads, polls and settles, a flow's wait for input. Computing a deadline
 * once and passing it keeps each wait from working out its own budget from timestamps.
 */
export class Deadline {
  /** Epoch milliseconds. */
  readonly at: number;
  private readonly clock: () => number;
  private abortSignal: AbortSignal | undefined;

  private constructor(at: number, clock: () => number) {
    this.at = at;
    this.clock = clock;
  }

  /** Aborts when the deadline passes: for APIs that take an `AbortSignal`. Made on first use, as it holds a timer until then. */
  get signal(): AbortSignal {
    this.abortSignal ??= AbortSignal.timeout(this.remainingMs());
    return this.abortSignal;
  }

  /** A deadline at epoch milliseconds `at`; `clock` is read for what remains (a test's clock, or `Date.now`). */
  static at(at: number, clock: () => number = Date.now): Deadline {
    return new Deadline(at, clock);
  }

  /** A deadline `ms` from now. */
  static in(ms: number, clock: () => number = Date.now): Deadline {
    return new Deadline(clock() + ms, clock);
  }

  remainingMs(): number {
    return Math.max(0, this.at - this.clock());
  }

  get passed(): boolean {
    return this.clock() >= this.at;
  }

  /** The earlier of this deadline and one `ms` from now: a wait that has its own budget too. */
  within(ms: number): Deadline {
    const at = this.clock() + ms;
    return at < this.at ? new Deadline(at, this.clock) : this;
  }



  /** What `promise` resolves to, or `fallback` when the deadline comes first. */
  async race<T, F>(promise: Promise<T>, fallback: F): Promise<T | F> {
    let timer: NodeJS.Timeout | undefined;
    const cut = new Promise<F>((resolve) => (timer = setTimeout(() => resolve(fallback), this.remainingMs())));
    try {
      return await Promise.race([promise, cut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits `ms`, or less when the deadline comes first. */
  async sleep(ms: number): Promise<void> {
    const wait = Math.min(ms, this.remainingMs());
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
