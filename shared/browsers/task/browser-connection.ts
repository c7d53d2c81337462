import type { CdpPipe } from "./cdp-pipe.ts";

/** Where the browser's answers and events for the connected DevTools client go. */
export interface DevToolsClient {
  send(message: string): void;
}

export interface CdpMessage {
  id?: number;
  method?: string;
  params?: { sessionId?: string; targetId?: string; requestId?: string; request?: { url?: string }; data?: { files?: unknown[] } };
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
 * The entry's own sessions (its guard against local files) are hidden from every client: none of
 * their messages reaches one, and a client's command addressed to one is refused.
 */
export function browserConnection(connect: (onMessage: (message: string) => void) => CdpPipe) {
  let lastId = 0;
  const ownCalls = new Map<number, { answered(result: unknown): void; failed(error: Error): void }>();
  const clientCalls = new Map<number, { client: DevToolsClient; id: number }>();
  const attachedSessions = new Set<string>();
  const ownSessions = new Map<string, (event: CdpMessage) => void>();
  let client: DevToolsClient | undefined;

  const pipe = connect((text) => {
    const message = JSON.parse(text) as CdpMessage;
    if (message.id !== undefined) {
      answer(message.id, message);
      return;
    }
    const ownEvents = message.sessionId === undefined ? undefined : ownSessions.get(message.sessionId);
    if (ownEvents) {
      ownEvents(message);
      return;
    }
    const sessionId = message.params?.sessionId;
    if (sessionId && ownSessions.has(sessionId)) return;
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

  /**
   * A command sent on one of the entry's sessions, or naming one (detaching it, say). Detaching by
   * target id alone, which Chromium still accepts, could pick the entry's session of the browser
   * target, so it is refused too: a client detaches by session id.
   */
  function addressesOwnSession(message: CdpMessage): boolean {
    const named = [message.sessionId, message.params?.sessionId].filter((id) => id !== undefined);
    if (named.some((id) => ownSessions.has(id))) return true;
    return message.method === "Target.detachFromTarget" && message.params?.sessionId === undefined;
  }

  /**
   * A command that has Chromium read files by their path on this machine and give them to a page
   * (a file input's files, a drag's): past the refusal of file: URLs, the client would read them.
   */
  function readsLocalFiles(message: CdpMessage): boolean {
    if (message.method === "DOM.setFileInputFiles") return true;
    return message.method === "Input.dispatchDragEvent" && (message.params?.data?.files?.length ?? 0) > 0;
  }

  function send(message: CdpMessage): number {
    lastId += 1;
    pipe.send(JSON.stringify({ ...message, id: lastId }));
    return lastId;
  }

  function call(method: string, params: object = {}, sessionId?: string): Promise<unknown> {
    return new Promise((answered, failed) => {
      const id = send({ method, params, ...(sessionId === undefined ? {} : { sessionId }) });
      ownCalls.set(id, { answered, failed });
    });
  }

  return {
    /** A command of the entry's own, outside any client's view; `sessionId` names one of its own sessions. */
    call,

    /** Makes `sessionId` the entry's own: its events go to `onEvent` alone, and no client may address it. */
    own(sessionId: string, onEvent: (event: CdpMessage) => void): void {
      ownSessions.set(sessionId, onEvent);
      // Chromium announces an attached session before it answers the attach: it was counted as a client's.
      attachedSessions.delete(sessionId);
    },

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
      const refused = addressesOwnSession(message)
        ? "this session is the browser task's own"
        : readsLocalFiles(message)
          ? "the browser task refuses commands that hand a page files of the machine it runs on"
          : undefined;
      if (refused) {
        // Answered on the session it was sent on, as Chromium answers, or the client cannot match it.
        from.send(JSON.stringify({ id: message.id, sessionId: message.sessionId, error: { code: -32000, message: refused } }));
        return;
      }
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
