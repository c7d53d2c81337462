/**
 * The live browsers of this process's flows, by browser session id. A flow's step holds its browser
 * between submissions; one left untouched for `idleLimitMs` is closed, so no Chromium outlives a flow
 * whose end was never told (a crashed caller, a lost release).
 */

export interface Closable {
  close(): Promise<void>;
}

export interface FlowRegistry<T extends Closable> {
  add(id: string, flow: T): void;
  /** The flow, its idle clock restarted; undefined when it was closed or never here. */
  get(id: string): T | undefined;
  /** Closes and forgets the flow; a flow already gone is fine. */
  close(id: string): Promise<void>;
  size(): number;
}

export function createFlowRegistry<T extends Closable>(idleLimitMs: number): FlowRegistry<T> {
  const flows = new Map<string, { flow: T; timer: NodeJS.Timeout }>();
  const close = async (id: string) => {
    const entry = flows.get(id);
    if (!entry) return;
    flows.delete(id);
    clearTimeout(entry.timer);
    await entry.flow.close();
  };
  const idleTimer = (id: string) => {
    // The timer alone must not keep a process alive that has nothing else to do.
    const timer = setTimeout(() => void close(id).catch(() => undefined), idleLimitMs);
    timer.unref();
    return timer;
  };
  return {
    add(id, flow) {
      flows.set(id, { flow, timer: idleTimer(id) });
    },
    get(id) {
      const entry = flows.get(id);
      if (!entry) return undefined;
      clearTimeout(entry.timer);
      entry.timer = idleTimer(id);
      return entry.flow;
    },
    close,
    size: () => flows.size,
  };
}
