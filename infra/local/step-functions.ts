import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { StateMachine } from "aws-local-stepfunctions";

type JSONValue = Parameters<StateMachine["run"]>[0];
import { scaledMs } from "#shared/domain/workflow.ts";
import { substitutedDefinition, workflowTasks, type WorkflowTaskState } from "#shared/step-functions/definition.ts";

type ExecutionStatus = "RUNNING" | "SUCCEEDED" | "FAILED" | "ABORTED";

interface Execution {
  executionArn: string;
  name: string;
  input: string;
  status: ExecutionStatus;
  startDate: Date;
  stopDate?: Date;
  output?: string;
  error?: string;
  abort(): void;
}

/** Errors in the shape the Step Functions JSON protocol uses, so the SDK raises its own classes. */
class ProtocolError extends Error {
  readonly type: string;
  constructor(type: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ProtocolError";
    this.type = type;
  }
}

export interface LocalStepFunctions {
  endpoint: string;
  /** A task token whose SendTaskSuccess/Failure settles `result`: the local `.waitForTaskToken`. */
  awaitTaskToken(): { token: string; result: Promise<unknown> };
  stop(): Promise<void>;
}

const repoRoot = resolve(import.meta.dirname, "../..");
const localFunctionArn = (name: string) => `arn:aws:lambda:us-east-1:000000000000:function:${name}`;
/** Executions kept for DescribeExecution after they end; the oldest finished ones go first. */
const retainedExecutions = 10_000;

/**
 * Runs the deployed ASL with aws-local-stepfunctions behind an endpoint speaking the Step Functions
 * JSON protocol, so the production adapter (shared/step-functions/engine.ts) runs unchanged, as does the
 * official `@aws-sdk/client-sfn` (the protocol test's client). Task states call
 * the same handler files CDK deploys, in this process.
 */
export async function startLocalStepFunctions(options: { stateMachineArn: string; timeScale: number }): Promise<LocalStepFunctions> {
  const placeholders = Object.fromEntries(
    Object.values(workflowTasks).map((task) => [task.placeholder, localFunctionArn(task.functionName)]),
  );
  const definition = withLocalTaskTimeouts(substitutedDefinition(placeholders));
  const machine = new StateMachine(definition as unknown as ConstructorParameters<typeof StateMachine>[0]);
  const executions = new Map<string, Execution>();
  const taskTokens = new Map<string, { resolve(value: unknown): void; reject(error: Error): void }>();

  function awaitTaskToken(): { token: string; result: Promise<unknown> } {
    const token = randomUUID();
    const result = new Promise<unknown>((resolveTask, rejectTask) => taskTokens.set(token, { resolve: resolveTask, reject: rejectTask }));
    return { token, result };
  }

  const taskHandlers = Object.fromEntries(
    await Promise.all(
      (Object.keys(workflowTasks) as WorkflowTaskState[]).map(async (state) => {
        const task: { handler: string; waitsForTaskToken?: boolean } = workflowTasks[state];
        const module = (await import(pathToFileURL(resolve(repoRoot, task.handler)).href)) as {
          handler: (payload: unknown) => Promise<unknown>;
        };
        const payloadOf = (input: JSONValue) => (input as { Payload: Record<string, unknown> }).Payload;
        // `lambda:invoke` hands the function `Payload` and answers `{Payload: result}`; with
        // `.waitForTaskToken` the state's result is what SendTaskSuccess sends, whenever it comes.
        const invoke = task.waitsForTaskToken
          ? async (input: JSONValue) => {
              const { token, result } = awaitTaskToken();
              const payload = payloadOf(input);
              await module.handler({ ...payload, task_token: token });
              return (await withTimeout(result, Number(payload.input_timeout_seconds) * 1000)) as JSONValue;
            }
          : async (input: JSONValue) => ({ Payload: (await module.handler(payloadOf(input))) as JSONValue });
        return [state, invoke] as const;
      }),
    ),
  );
  const retryIntervals = scaledRetryIntervals(definition, options.timeScale);

  function executionArnFor(name: string): string {
    return `${options.stateMachineArn.replace(":stateMachine:", ":execution:")}:${name}`;
  }

  function find(executionArn: unknown): Execution {
    const execution = executions.get(String(executionArn));
    if (!execution) throw new ProtocolError("ExecutionDoesNotExist", `Execution Does Not Exist: '${String(executionArn)}'`);
    return execution;
  }

  function forgetOldest(): void {
    if (executions.size <= retainedExecutions) return;
    for (const [arn, execution] of executions) {
      if (execution.status !== "RUNNING") executions.delete(arn);
      if (executions.size <= retainedExecutions) return;
    }
  }

  function startExecution(body: { stateMachineArn?: string; name?: string; input?: string }) {
    if (body.stateMachineArn !== options.stateMachineArn) {
      throw new ProtocolError("StateMachineDoesNotExist", `State Machine Does Not Exist: '${body.stateMachineArn}'`);
    }
    const name = body.name ?? randomUUID();
    const executionArn = executionArnFor(name);
    const input = body.input ?? "{}";
    const existing = executions.get(executionArn);
    if (existing) {
      // Step Functions' idempotency: the same name and input while running returns the execution.
      if (existing.status === "RUNNING" && existing.input === input) return { executionArn, startDate: seconds(existing.startDate) };
      throw new ProtocolError("ExecutionAlreadyExists", `Execution Already Exists: '${executionArn}'`);
    }
    const startDate = new Date();
    const run = machine.run(JSON.parse(input), {
      overrides: { taskResourceLocalHandlers: taskHandlers, retryIntervalOverrides: retryIntervals },
      context: {
        Execution: { Id: executionArn, Name: name, Input: JSON.parse(input), StartTime: startDate.toISOString() },
        // Replaced per waiting task by a registered token (see invoke); `$$.Task.Token` must resolve.
        Task: { Token: "assigned-when-the-task-starts" },
        StateMachine: { Id: options.stateMachineArn, Name: options.stateMachineArn.split(":").pop() },
      },
      noThrowOnAbort: true,
    });
    const execution: Execution = { executionArn, name, input, status: "RUNNING", startDate, abort: run.abort };
    executions.set(executionArn, execution);
    forgetOldest();
    run.result.then(
      (output: unknown) => {
        if (execution.status !== "RUNNING") return;
        Object.assign(execution, { status: "SUCCEEDED", stopDate: new Date(), output: JSON.stringify(output) });
      },
      (error: unknown) => {
        if (execution.status !== "RUNNING") return;
        Object.assign(execution, { status: "FAILED", stopDate: new Date(), error: error instanceof Error ? error.message : String(error) });
      },
    );
    return { executionArn, startDate: seconds(startDate) };
  }

  function describe(execution: Execution) {
    return {
      executionArn: execution.executionArn,
      stateMachineArn: options.stateMachineArn,
      name: execution.name,
      status: execution.status,
      startDate: seconds(execution.startDate),
      ...(execution.stopDate ? { stopDate: seconds(execution.stopDate) } : {}),
    };
  }

  function settleTask(token: unknown, settle: (waiter: { resolve(value: unknown): void; reject(error: Error): void }) => void) {
    const waiter = taskTokens.get(String(token));
    if (!waiter) throw new ProtocolError("TaskDoesNotExist", "Task Does Not Exist");
    taskTokens.delete(String(token));
    settle(waiter);
    return {};
  }

  const operations: Record<string, (body: Record<string, unknown>) => unknown> = {
    StartExecution: (body) => startExecution(body as { stateMachineArn?: string; name?: string; input?: string }),
    StopExecution: (body) => {
      const execution = find(body.executionArn);
      if (execution.status === "RUNNING") {
        Object.assign(execution, { status: "ABORTED", stopDate: new Date() });
        execution.abort();
      }
      return { stopDate: seconds(execution.stopDate ?? new Date()) };
    },
    DescribeExecution: (body) => {
      const execution = find(body.executionArn);
      return { ...describe(execution), input: execution.input, ...(execution.output ? { output: execution.output } : {}), ...(execution.error ? { error: execution.error } : {}) };
    },
    ListExecutions: (body) => {
      const matching = [...executions.values()].filter((execution) => !body.statusFilter || execution.status === body.statusFilter);
      const offset = Number(body.nextToken ?? 0);
      const limit = Number(body.maxResults ?? 100) || 100;
      const page = matching.slice(offset, offset + limit);
      return { executions: page.map(describe), ...(offset + limit < matching.length ? { nextToken: String(offset + limit) } : {}) };
    },
    SendTaskSuccess: (body) => settleTask(body.taskToken, (waiter) => waiter.resolve(JSON.parse(String(body.output ?? "null")))),
    SendTaskFailure: (body) =>
      settleTask(body.taskToken, (waiter) => waiter.reject(Object.assign(new Error(String(body.cause ?? "")), { name: String(body.error ?? "TaskFailed") }))),
  };

  const server: Server = createServer((request, response) => {
    handle(request)
      .then((result) => {
        response.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
        response.end(JSON.stringify(result));
      })
      .catch((error: unknown) => {
        const type = error instanceof ProtocolError ? error.type : "InvalidParameterValue";
        response.writeHead(400, { "content-type": "application/x-amz-json-1.0" });
        response.end(JSON.stringify({ __type: type, message: error instanceof Error ? error.message : String(error) }));
      });
  });

  async function handle(request: IncomingMessage): Promise<unknown> {
    const target = String(request.headers["x-amz-target"] ?? "");
    const operation = operations[target.replace(/^AWSStepFunctions\./, "")];
    if (!operation) throw new ProtocolError("UnknownOperationException", `operation '${target}' is not served locally`);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return operation(JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>);
  }

  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    awaitTaskToken,
    async stop() {
      for (const execution of executions.values()) {
        if (execution.status === "RUNNING") {
          Object.assign(execution, { status: "ABORTED", stopDate: new Date() });
          execution.abort();
        }
      }
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}

/** The JSON protocol carries timestamps as epoch seconds. */
function seconds(date: Date): number {
  return date.getTime() / 1000;
}

/**
 * aws-local-stepfunctions evaluates `TimeoutSecondsPath` against the task's effective input (after
 * `Parameters`), where Step Functions uses the state input; so locally the token-waiting tasks get
 * a day's `TimeoutSeconds` (no flow lives that long) and their wrapper enforces the wait from the
 * same value, which the ASL also hands the function in its Payload.
 */
function withLocalTaskTimeouts(definition: Record<string, unknown>): Record<string, unknown> {
  const states = definition.States as Record<string, Record<string, unknown>>;
  for (const [name, task] of Object.entries(workflowTasks) as [string, { waitsForTaskToken?: boolean }][]) {
    const state = states[name];
    if (!task.waitsForTaskToken || !state) continue;
    delete state.TimeoutSecondsPath;
    state.TimeoutSeconds = 24 * 60 * 60;
  }
  return definition;
}

/**
 * The waits between a task's retries, scaled with the flow timeouts. At scale 1 there are none, so
 * aws-local-stepfunctions applies the ASL's IntervalSeconds, BackoffRate and jitter as Step
 * Functions does; an override is each retrier's whole wait (the library then drops backoff and
 * jitter), so a scaled run waits each retrier's first interval, scaled, every time.
 */
export function scaledRetryIntervals(definition: Record<string, unknown>, timeScale: number): Record<string, number[]> {
  if (timeScale === 1) return {};
  const states = definition.States as Record<string, { Retry?: { IntervalSeconds?: number }[] }>;
  return Object.fromEntries(
    Object.entries(states)
      .filter(([, state]) => state.Retry !== undefined)
      // 1 s is the ASL's default interval.
      .map(([name, state]) => [name, (state.Retry ?? []).map((retrier) => scaledMs(retrier.IntervalSeconds ?? 1, { timeScale }))]),
  );
}

/** Rejects as Step Functions' own `States.Timeout`, so the state's Catch routes it as in AWS. */
function withTimeout<T>(work: Promise<T>, milliseconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error("the task timed out"), { name: "States.Timeout" })), milliseconds);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
