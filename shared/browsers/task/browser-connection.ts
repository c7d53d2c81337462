import type { CdpPipe } from "./cdp-pipe.ts";

/** Where the browser's answers and events for the connected DevTools client go. */
export interface DevToolsClient {
  send(message: string): void;
}

interface CdpMessage {
  id?: number;
  method?: string;
  params?: { sessionId?: string };
  sessionId?: string;
  result?: unknown;
  error?: { message?: string };
}

/**
 * The browser has one DevTools connection, the pipe, which outlives each client: this shares it
 * between the entry's own calls and the client of the moment. Every command gets an id of the
 * pipe's own, so an answer meant for a client that has left is dropped rather than read by the next
 * one as the answer to its own command of that id; and the sessions a client attached are detached
 * when it leaves, so the next client starts without them (as it would on a fresh DevTools socket).
 */
export function browserConnection(connect: (onMessage: (message: string) => void) => CdpPipe) {
  let lastId = 0;
  const ownCalls = new Map<number, { answered(result: unknown): void; failed(error: Error): void }>();
  const clientCalls = new Map<number, { client: DevToolsClient; id: number }>();
  const attachedSessions = new Set<string>();
  let client: DevToolsClient | undefined;

  const pipe = connect((text) => {
    const message = JSON.parse(text) as CdpMessage;
    if (message.id !== undefined) {
      answer(message.id, message);
      return;
    }
    const sessionId = message.params?.sessionId;
    if (message.method === "Target.attachedToTarget" && sessionId) attachedSessions.add(sessionId);
    if (message.method === "Target.detachedFromTarget" && sessionId) attachedSessions.delete(sessionId);
    client?.send(text);
  });

  function answer(pipeId: number, message: CdpMessage): void {
    const own = ownCalls.get(pipeId);
    if (own) {
      ownCalls.delete(pipeId);
      if (message.error) own.failed(new Error(message.error.message ?? "the browser refused the command"));
      else own.answered(message.result);
      return;
    }
    const forwarded = clientCalls.get(pipeId);
    if (!forwarded) return;
    clientCalls.delete(pipeId);
    if (forwarded.client === client) client.send(JSON.stringify({ ...message, id: forwarded.id }));
  }

  function send(message: CdpMessage): number {
    lastId += 1;
    pipe.send(JSON.stringify({ ...message, id: lastId }));
    return lastId;
  }

  function call(method: string, params: object = {}): Promise<unknown> {
    return new Promise((answered, failed) => {
      const id = send({ method, params });
      ownCalls.set(id, { answered, failed });
    });
  }

  return {
    /** A command of the entry's own, outside any client's view. */
    call,

    /** The client whose commands `fromClient` forwards and who receives the browser's events. */
    attach(next: DevToolsClient): void {
      client = next;
    },

    /** Drops what is not a command (no JSON, or no numeric id), as no answer could reach its sender. */
    fromClient(from: DevToolsClient, text: string): void {
      if (from !== client) return;
      let message: CdpMessage;
      try {
        message = JSON.parse(text) as CdpMessage;
      } catch {
        return;
      }
      if (typeof message.id !== "number") return;
      clientCalls.set(send({ ...message }), { client: from, id: message.id });
    },

    /** Forgets the client and undoes what it left attached or switched on at the browser level. */
    detach(from: DevToolsClient): void {
      if (from !== client) return;
      client = undefined;
      const ignore = () => {};
      for (const sessionId of attachedSessions) call("Target.detachFromTarget", { sessionId }).catch(ignore);
      attachedSessions.clear();
      // Chromium refuses a browser-level auto-attach setting without flatten, switching it off included.
      call("Target.setAutoAttach", { autoAttach: false, waitForDebuggerOnStart: false, flatten: true }).catch(ignore);
      call("Target.setDiscoverTargets", { discover: false }).catch(ignore);
    },

    /** Fails every call still waiting: the browser is gone. */
    close(reason: Error): void {
      for (const own of ownCalls.values()) own.failed(reason);
      ownCalls.clear();
      clientCalls.clear();
    },
  };
}

export type BrowserConnection = ReturnType<typeof browserConnection>;
