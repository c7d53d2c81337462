import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface RunningInstance {
  pid: number;
  url: string;
  dynamoEndpoint?: string;
  s3Endpoint?: string;
}

/** `npm start` records itself here so a second start, and `npm run api-key`, can find it. */
export function runningFile(dataDir: string): string {
  return join(dataDir, "running.json");
}

export function runningInstance(dataDir: string): RunningInstance | undefined {
  try {
    const running = JSON.parse(readFileSync(runningFile(dataDir), "utf8")) as RunningInstance;
    process.kill(running.pid, 0);
    return running;
  } catch {
    return undefined;
  }
}
