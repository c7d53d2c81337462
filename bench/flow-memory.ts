import { Worker } from "node:worker_threads";

/** The most one login flow held, from /proc samples taken while it ran. */
export interface FlowMemoryPeak {
  /** The flow's Chromium: its browser process and every process under it, summed at each sample. */
  chromiumPssKb: number;
  chromiumRssKb: number;
  chromiumProcesses: number;
  /** The service process's own VmRSS: when the flow began, and the most it reached during the flow. */
  serviceRssKbBefore: number;
  serviceRssKbPeak: number;
  samples: number;
}

type MemoryCall = { call: "begin"; servicePid: number } | { call: "end" } | { call: "stop" };
export type MemoryRequest = MemoryCall & { id: number };
export type MemoryReply = { id: number; peak?: FlowMemoryPeak };

export interface FlowMemory {
  /** Starts watching the Chromium processes under `servicePid` (the process running the flows) and that process's RSS. */
  begin(servicePid: number): Promise<void>;
  end(): Promise<FlowMemoryPeak>;
  stop(): Promise<void>;
}

/** Samples /proc on a thread of its own, so that reading it never holds up the service's event loop in this process. */
export async function startFlowMemory(): Promise<FlowMemory> {
  const worker = new Worker(new URL("./flow-memory-worker.ts", import.meta.url));
  const waiting = new Map<number, (reply: MemoryReply) => void>();
  let lastId = 0;
  worker.on("message", (reply: MemoryReply) => {
    waiting.get(reply.id)?.(reply);
    waiting.delete(reply.id);
  });
  const failed = new Promise<never>((_, reject) => worker.once("error", reject));
  const ask = (call: MemoryCall) =>
    Promise.race([
      failed,
      new Promise<MemoryReply>((resolve) => {
        const id = ++lastId;
        waiting.set(id, resolve);
        worker.postMessage({ ...call, id } satisfies MemoryRequest);
      }),
    ]);
  return {
    begin: async (servicePid) => void (await ask({ call: "begin", servicePid })),
    end: async () => {
      const { peak } = await ask({ call: "end" });
      if (!peak) throw new Error("the memory sampler had no flow to report");
      return peak;
    },
    stop: async () => {
      await ask({ call: "stop" });
      await worker.terminate();
    },
  };
}
