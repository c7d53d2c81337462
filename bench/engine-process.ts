/**
 * One browser-engine login in a fresh process (the engine's modules loaded, playwright-core not yet:
 * the launcher imports it at its first launch), its parts timed by engine-timeline.ts. Its
 * options come as the first argument; it asks the parent over IPC what to type at the step, and
 * sends the flow's timings back.
 */
import type { FlowPrompt, Submission } from "#shared/login/types.ts";
import { instrumentedEngine, timedEngineFlow, type EngineFlow } from "./engine-timeline.ts";

export interface EngineProcessOptions {
  executablePath: string;
  loginUrl: string;
}

export type EngineProcessMessage = { prompt: FlowPrompt } | { flow: EngineFlow };

const send = process.send?.bind(process);
if (!send) throw new Error("engine-process.ts runs as a child with an IPC channel");

const { executablePath, loginUrl } = JSON.parse(process.argv[2] ?? "{}") as EngineProcessOptions;
const answerOf = (prompt: FlowPrompt) =>
  new Promise<Submission>((resolve) => {
    process.once("message", (answer) => resolve(answer as Submission));
    send({ prompt } satisfies EngineProcessMessage);
  });
const flow = await timedEngineFlow(instrumentedEngine(executablePath), answerOf, { domain: "127.0.0.1", loginUrl, allowedDomains: [], engine: "browser" });
send({ flow } satisfies EngineProcessMessage, () => process.disconnect());
