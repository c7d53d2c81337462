import { App } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { beforeAll, describe, expect, it } from "vitest";
import { exposedHeaders } from "#shared/http/cors.ts";
import type { Grant } from "#shared/grants.ts";
import { authorizer, binaryMediaTypes, corsPaths, corsPreflight, routes } from "#shared/routes.ts";
import { tableDefinition } from "#shared/store/table.ts";
import { browserFlowTimeoutSeconds } from "#shared/domain/flows/step.ts";
import { definitionText, substitutedDefinition, workflowTasks, type WorkflowTask } from "#shared/step-functions/definition.ts";
import { authConnectionApp, type AuthConnectionStack } from "../../infra/stack.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = { Action: string | string[]; Resource: unknown };

/**
 * What each grant must give (a witness action) and every action it may give. A Record over `Grant`,
 * so a new grant in the route table fails to compile here until its IAM is specified.
 */
const grantActions: Record<Grant, { witness: string | undefined; allowed: RegExp }> = {
  "table:read": { witness: "dynamodb:Query", allowed: /^dynamodb:(GetItem|BatchGetItem|Query|Scan|ConditionCheckItem|DescribeTable|GetRecords|GetShardIterator)$/ },
  "table:write": { witness: "dynamodb:PutItem", allowed: /^dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem|DescribeTable)$/ },
  "archives:read": { witness: "s3:GetObject", allowed: /^s3:(GetObject|ListBucket)$/ },
  "archives:write": { witness: "s3:PutObject", allowed: /^s3:(PutObject|DeleteObject)$/ },
  "workflow:start": { witness: "states:StartExecution", allowed: /^states:StartExecution$/ },
  "workflow:stop": { witness: "states:StopExecution", allowed: /^states:StopExecution$/ },
  "workflow:signal": { witness: "states:SendTaskSuccess", allowed: /^states:SendTask(Success|Failure)$/ },
  "secrets:use": { witness: "kms:Decrypt", allowed: /^kms:(GenerateDataKey|Decrypt)$/ },
  // Nothing in this stack, deployed without pools; browser-tasks.test.ts checks it in one with them.
  "browsers:lease": { witness: undefined, allowed: /^(ecs:(StopTask|DescribeTasks|ListTasks)|kms:GenerateMac)$/ },
};

/** Every function the stack deploys, with the handler file and grants it must be built from. */
const deployedFunctions = [
  ...routes.map((route) => ({ name: route.name, handler: route.handler, grants: route.grants })),
  { name: authorizer.name, handler: authorizer.handler, grants: authorizer.grants },
  { name: corsPreflight.name, handler: corsPreflight.handler, grants: corsPreflight.grants },
  ...Object.values(workflowTasks).map((task) => ({ name: task.functionName, handler: task.handler, grants: task.grants })),
];

/** The workflow tasks that run the login browser, by state name. */
const browserTasks = Object.entries(workflowTasks as Record<string, WorkflowTask>).filter(([, task]) => task.runsBrowser);

let app: App;
let stack: AuthConnectionStack;
let template: Template;
let resources: Record<string, Resource>;

const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);

/** The logical id of the function whose description names `handler`: the stack's route-to-function link. */
function functionFor(handler: string): string {
  const matches = ofType("AWS::Lambda::Function").filter(([, fn]) => String(fn.Properties.Description).endsWith(`: ${handler}`));
  expect(matches).toHaveLength(1);
  return matches[0]![0];
}

/** The full path of an API resource, rebuilt from its parents up to the API's root. */
function pathOf(resourceId: unknown): string {
  const ref = (resourceId as { Ref?: string }).Ref;
  if (ref === undefined) return "";
  const { PathPart, ParentId } = resources[ref]!.Properties as { PathPart: string; ParentId: unknown };
  return `${pathOf(ParentId)}/${PathPart}`;
}

function statementsOf(functionId: string): Statement[] {
  const role = (resources[functionId]!.Properties.Role as { "Fn::GetAtt": [string, string] })["Fn::GetAtt"][0];
  return ofType("AWS::IAM::Policy")
    .filter(([, policy]) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: role }]))
    .flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

function actionsOf(functionId: string): string[] {
  return statementsOf(functionId)
    .flatMap((statement) => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]))
    .filter((action) => !action.startsWith("logs:"));
}

beforeAll(() => {
  // Bundling is exercised by synth.test.ts; here only the template matters, synthesized once.
  app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
  stack = authConnectionApp(app);
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources as Record<string, Resource>;
});

describe("the stack's functions", () => {
  it("has exactly one Node 22 function per route, authorizer and workflow task, arm64 but for those that run the login browser", () => {
    const browserHandlers = browserTasks.map(([, task]) => task.handler);
    template.resourceCountIs("AWS::Lambda::Function", deployedFunctions.length);
    for (const fn of deployedFunctions) {
      const architecture = browserHandlers.includes(fn.handler) ? "x86_64" : "arm64";
      expect(resources[functionFor(fn.handler)]!.Properties, fn.name).toMatchObject({ Runtime: "nodejs22.x", Architectures: [architecture], Handler: "index.handler" });
    }
  });

  it("runs the login browser in the LoginStep, Reauth and HealthCheck tasks, on x86_64 (the only Chromium @sparticuz/chromium ships) with 2048 MB and 1024 MB of /tmp", () => {
    expect(browserTasks.map(([state]) => state).sort()).toEqual(["HealthCheck", "LoginStep", "Reauth"]);
    for (const [state, task] of browserTasks) {
      expect(resources[functionFor(task.handler)]!.Properties, state).toMatchObject({
        Architectures: ["x86_64"],
        MemorySize: 2048,
        EphemeralStorage: { Size: 1024 },
      });
    }
  });

  it("lets a browser flow's LoginStep hold its browser for Lambda's 15 minutes, past the flow's own end, and bounds the browser's checks and re-auths", () => {
    const timeoutOf = (state: keyof typeof workflowTasks) => resources[functionFor(workflowTasks[state].handler)]!.Properties.Timeout;

    expect(timeoutOf("LoginStep")).toBe(15 * 60);
    expect(timeoutOf("LoginStep")).toBeGreaterThan(browserFlowTimeoutSeconds);
    expect(timeoutOf("Reauth")).toBe(5 * 60);
    expect(timeoutOf("HealthCheck")).toBe(2 * 60);
    for (const [state, task] of Object.entries(workflowTasks as Record<string, WorkflowTask>).filter(([, task]) => !task.runsBrowser)) {
      expect(resources[functionFor(task.handler)]!.Properties, state).toMatchObject({ Timeout: 60, MemorySize: 1024 });
      expect(resources[functionFor(task.handler)]!.Properties.EphemeralStorage, state).toBeUndefined();
    }
  });

  it("wires each route's method and path to the function built from the route's handler", () => {
    template.resourceCountIs("AWS::ApiGateway::Method", routes.length + corsPaths.size);
    for (const route of routes) {
      const fn = functionFor(route.handler);
      const methods = ofType("AWS::ApiGateway::Method").filter(
        ([, method]) => method.Properties.HttpMethod === route.method && JSON.stringify(method.Properties.Integration).includes(`"${fn}"`),
      );
      expect(methods, route.name).toHaveLength(1);
      expect(pathOf(methods[0]![1].Properties.ResourceId), route.name).toBe(route.path);
    }
  });

  it("gives every function the whole configuration, pointing at the deployed table, bucket and state machine", () => {
    const [, stateMachine] = ofType("AWS::StepFunctions::StateMachine")[0]!;
    for (const fn of deployedFunctions) {
      const variables = (resources[functionFor(fn.handler)]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables).toMatchObject({
        DEPLOYMENT_MODE: "aws",
        TABLE_NAME: { Ref: ofType("AWS::DynamoDB::Table")[0]![0] },
        BUCKET_NAME: { Ref: ofType("AWS::S3::Bucket")[0]![0] },
        KMS_KEY_ID: { "Fn::GetAtt": [ofType("AWS::KMS::Key")[0]![0], "Arn"] },
      });
      expect(JSON.stringify(variables.STATE_MACHINE_ARN)).toContain(`:stateMachine:${String(stateMachine.Properties.StateMachineName)}"`);
    }
  });

  it("passes the hosted page's settings given as CDK context to every function, and refuses a bad one at synth", () => {
    const settings = {
      PUBLIC_BASE_URL: "https://auth.example.com",
      REDIRECT_ORIGINS: "https://app.example.com",
      ALLOWED_ORIGINS: "https://app.example.com",
      FRAME_ANCESTORS: "'self'",
    };
    const given = authConnectionApp(new App({ context: { "aws:cdk:bundling-stacks": [], ...settings } }));
    const functions = Object.values(Template.fromStack(given).findResources("AWS::Lambda::Function"));
    expect(functions.length).toBe(deployedFunctions.length);
    for (const fn of functions) expect((fn.Properties as { Environment: { Variables: object } }).Environment.Variables).toMatchObject(settings);
    for (const response of Object.values(Template.fromStack(given).findResources("AWS::ApiGateway::GatewayResponse"))) {
      expect(response.Properties.ResponseParameters).toMatchObject({ "gatewayresponse.header.access-control-allow-origin": "'https://app.example.com'" });
    }
    expect(() => authConnectionApp(new App({ context: { "aws:cdk:bundling-stacks": [], REDIRECT_ORIGINS: "javascript:alert(1)" } }))).toThrow(/REDIRECT_ORIGINS/);
  });

  it("limits each function's IAM actions to what its grants name, and gives each grant", () => {
    for (const fn of deployedFunctions) {
      const actions = actionsOf(functionFor(fn.handler));
      for (const grant of fn.grants) {
        const { witness } = grantActions[grant];
        if (witness) expect(actions, `${fn.name} ${grant}`).toContain(witness);
      }
      const unexplained = actions.filter((action) => !fn.grants.some((grant) => grantActions[grant].allowed.test(action)));
      expect(unexplained, fn.name).toEqual([]);
    }
  });

  it("lets the functions that seal or open secrets generate and decrypt data keys under the credentials key, and no other function touch KMS", () => {
    const [keyId] = ofType("AWS::KMS::Key")[0]!;
    const credentialRoutesWithSecrets = routes.filter((route) => route.path.startsWith("/credentials") && route.grants.includes("secrets:use"));

    expect(credentialRoutesWithSecrets.map((route) => route.name).sort()).toEqual(["CreateCredential", "GetCredentialTotpCode", "UpdateCredential"]);
    for (const fn of deployedFunctions) {
      const kmsStatements = statementsOf(functionFor(fn.handler)).filter((statement) => JSON.stringify(statement.Action).includes("kms:"));
      const expected = fn.grants.includes("secrets:use")
        ? [expect.objectContaining({ Effect: "Allow", Action: ["kms:GenerateDataKey", "kms:Decrypt"], Resource: { "Fn::GetAtt": [keyId, "Arn"] } })]
        : [];
      expect(kmsStatements, fn.name).toEqual(expected);
    }
  });

  it("lets the hosted login page's functions write their logs and touch nothing else", () => {
    for (const name of ["HostedLoginPage", "HostedLoginAsset"]) {
      const route = routes.find((candidate) => candidate.name === name)!;
      const statements = statementsOf(functionFor(route.handler));
      expect(route.grants, name).toEqual([]);
      expect(statements.length, name).toBeGreaterThan(0);
      expect(statements.flatMap((statement) => (Array.isArray(statement.Action) ? statement.Action : [statement.Action])).filter((action) => !action.startsWith("logs:")), name).toEqual([]);
    }
  });

  it("lets a read-only route read and nothing else", () => {
    const actions = actionsOf(functionFor(routes.find((route) => route.name === "GetConnection")!.handler));

    expect(actions).toContain("dynamodb:GetItem");
    expect(actions.filter((action) => /Put|Update|Delete|Write/.test(action) || /^(s3|states):/.test(action))).toEqual([]);
  });
});

describe("the API", () => {
  it("puts every method except the handoff exchange and the hosted login page behind the bearer REQUEST authorizer, cached as long as the functions cache a key", () => {
    const [authorizerId] = ofType("AWS::ApiGateway::Authorizer")[0]!;
    const unauthenticated = routes.filter((route) => route.auth === "none").map((route) => route.name);
    expect(unauthenticated).toEqual(["ExchangeHandoffCode", "HostedLoginPage", "HostedLoginAsset"]);
    for (const route of routes) {
      const fn = functionFor(route.handler);
      const [, method] = ofType("AWS::ApiGateway::Method").find(([, m]) => JSON.stringify(m.Properties.Integration).includes(`"${fn}"`))!;
      if (route.auth === "none") {
        // The one-time code in the body is the exchange's credential, checked by its handler.
        expect(method.Properties.AuthorizationType, route.name).toBe("NONE");
        expect(method.Properties.AuthorizerId, route.name).toBeUndefined();
      } else {
        expect(method.Properties, route.name).toMatchObject({ AuthorizationType: "CUSTOM", AuthorizerId: { Ref: authorizerId } });
      }
    }
    const authorizerFunction = functionFor(authorizer.handler);
    const keyCacheSeconds = (resources[authorizerFunction]!.Properties.Environment as { Variables: Record<string, string> }).Variables.API_KEY_CACHE_SECONDS;

    expect(resources[authorizerId]!.Properties).toMatchObject({
      Type: "REQUEST",
      IdentitySource: "method.request.header.Authorization",
      AuthorizerResultTtlInSeconds: Number(keyCacheSeconds),
    });
    expect(JSON.stringify(resources[authorizerId]!.Properties.AuthorizerUri)).toContain(authorizerFunction);
  });

  it("streams the answers of streaming routes through InvokeWithResponseStream, and only theirs", () => {
    for (const route of routes) {
      const fn = functionFor(route.handler);
      const [, method] = ofType("AWS::ApiGateway::Method").find(([, m]) => JSON.stringify(m.Properties.Integration).includes(`"${fn}"`))!;
      const integration = JSON.stringify(method.Properties.Integration);
      expect(integration.includes('"ResponseTransferMode":"STREAM"'), route.name).toBe(route.streaming === true);
      expect(integration.includes("/response-streaming-invocations"), route.name).toBe(route.streaming === true);
    }
  });

  it("lets a route's function run as long as the route table says, the events stream up to Lambda's 15 minutes", () => {
    const events = routes.find((route) => route.name === "FollowConnectionEvents")!;
    expect(events.timeoutSeconds).toBe(900);
    for (const route of routes.filter((candidate) => candidate.timeoutSeconds)) {
      expect(resources[functionFor(route.handler)]!.Properties.Timeout, route.name).toBe(route.timeoutSeconds);
    }
  });

  it("reserves concurrency for the events stream's function alone, which a deployer may change or drop", () => {
    const eventsFunction = functionFor(routes.find((route) => route.name === "FollowConnectionEvents")!.handler);
    const reservedOf = (given: AuthConnectionStack) =>
      Object.fromEntries(
        Object.entries(Template.fromStack(given).findResources("AWS::Lambda::Function"))
          .filter(([, fn]) => fn.Properties.ReservedConcurrentExecutions !== undefined)
          .map(([id, fn]) => [id, fn.Properties.ReservedConcurrentExecutions as number]),
      );
    const synthesizedWith = (value: string) => authConnectionApp(new App({ context: { "aws:cdk:bundling-stacks": [], RESERVED_STREAM_CONCURRENCY: value } }));

    expect(reservedOf(stack)).toEqual({ [eventsFunction]: 50 });
    expect(reservedOf(synthesizedWith("20"))).toEqual({ [eventsFunction]: 20 });
    expect(reservedOf(synthesizedWith("none"))).toEqual({});
    expect(() => synthesizedWith("0")).toThrow(/RESERVED_STREAM_CONCURRENCY/);
  });

  it("answers API Gateway's own 401 and unknown routes with the service's error body", () => {
    template.hasResourceProperties("AWS::ApiGateway::GatewayResponse", {
      ResponseType: "UNAUTHORIZED",
      StatusCode: "401",
      ResponseTemplates: { "application/json": JSON.stringify({ code: "unauthorized", message: "missing or unknown API key" }) },
    });
    template.hasResourceProperties("AWS::ApiGateway::GatewayResponse", { ResponseType: "MISSING_AUTHENTICATION_TOKEN", StatusCode: "404" });
  });

  it("answers OPTIONS without the authorizer on exactly the cors routes' resources, with the preflight function", () => {
    const preflightFunction = functionFor(corsPreflight.handler);
    const options = ofType("AWS::ApiGateway::Method").filter(([, method]) => method.Properties.HttpMethod === "OPTIONS");

    expect(options.map(([, method]) => pathOf(method.Properties.ResourceId)).sort()).toEqual([...corsPaths.keys()].sort());
    for (const [, method] of options) {
      expect(method.Properties.AuthorizationType).toBe("NONE");
      expect(method.Properties.AuthorizerId).toBeUndefined();
      expect(JSON.stringify(method.Properties.Integration)).toContain(`"${preflightFunction}"`);
    }
  });

  it("lets the preflight function write its logs and touch nothing else", () => {
    const statements = statementsOf(functionFor(corsPreflight.handler));

    expect(statements.length).toBeGreaterThan(0);
    expect(actionsOf(functionFor(corsPreflight.handler))).toEqual([]);
  });

  it("puts the CORS headers fixed from ALLOWED_ORIGINS (any origin by default) on every one of API Gateway's own answers, never echoing Origin", () => {
    const gatewayResponses = ofType("AWS::ApiGateway::GatewayResponse");

    expect(gatewayResponses.length).toBeGreaterThan(0);
    for (const [, response] of gatewayResponses) {
      expect(response.Properties.ResponseParameters, String(response.Properties.ResponseType)).toMatchObject({
        "gatewayresponse.header.access-control-allow-origin": "'*'",
        "gatewayresponse.header.access-control-expose-headers": `'${exposedHeaders.join(", ")}'`,
      });
      expect(JSON.stringify(response.Properties.ResponseParameters)).not.toContain("method.request.header.Origin");
      expect(JSON.stringify(response.Properties.ResponseParameters).toLowerCase()).not.toContain("allow-credentials");
    }
  });

  it("answers an authorizer's denial 403 and any other refusal of API Gateway's own with our error body", () => {
    template.hasResourceProperties("AWS::ApiGateway::GatewayResponse", {
      ResponseType: "ACCESS_DENIED",
      StatusCode: "403",
      ResponseTemplates: { "application/json": Match.serializedJson(Match.objectLike({ code: "forbidden" })) },
    });
    template.hasResourceProperties("AWS::ApiGateway::GatewayResponse", {
      ResponseType: "DEFAULT_4XX",
      StatusCode: Match.absent(),
      ResponseTemplates: { "application/json": Match.serializedJson(Match.objectLike({ code: "bad_request" })) },
    });
  });

  it("puts no Allow-Origin on API Gateway's own answers when ALLOWED_ORIGINS lists several origins: it cannot choose per request", () => {
    const several = authConnectionApp(
      new App({ context: { "aws:cdk:bundling-stacks": [], ALLOWED_ORIGINS: "https://app.example.com,https://other.example.com" } }),
    );
    const responses = Object.values(Template.fromStack(several).findResources("AWS::ApiGateway::GatewayResponse"));

    expect(responses.length).toBeGreaterThan(0);
    for (const response of responses) expect(response.Properties.ResponseParameters).not.toHaveProperty("gatewayresponse.header.access-control-allow-origin");
  });

  it("declares the route table's binary media types, throttles the stage and writes access logs", () => {
    template.hasResourceProperties("AWS::ApiGateway::RestApi", { BinaryMediaTypes: [...binaryMediaTypes] });
    template.hasResourceProperties("AWS::ApiGateway::Stage", {
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.anyValue() },
      MethodSettings: Match.arrayWith([Match.objectLike({ ThrottlingRateLimit: Match.anyValue(), ThrottlingBurstLimit: Match.anyValue(), DataTraceEnabled: false })]),
    });
  });
});

describe("storage", () => {
  it("builds the table from the shared table definition: keys, indexes, TTL, PITR, on-demand, protected", () => {
    const indexes = Object.values(tableDefinition.indexes);
    template.hasResourceProperties("AWS::DynamoDB::Table", {
      KeySchema: [
        { AttributeName: tableDefinition.partitionKey, KeyType: "HASH" },
        { AttributeName: tableDefinition.sortKey, KeyType: "RANGE" },
      ],
      GlobalSecondaryIndexes: indexes.map((index) =>
        Match.objectLike({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: "HASH" },
            { AttributeName: index.sortKey, KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "ALL" },
        }),
      ),
      TimeToLiveSpecification: { AttributeName: tableDefinition.timeToLiveAttribute, Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      BillingMode: "PAY_PER_REQUEST",
      DeletionProtectionEnabled: true,
    });
    template.hasResource("AWS::DynamoDB::Table", { DeletionPolicy: "Retain" });
  });

  it("keeps the archive bucket private, encrypted, versioned (old versions for 30 days, replays for 30 days), TLS-only and retained", () => {
    template.hasResource("AWS::S3::Bucket", {
      DeletionPolicy: "Retain",
      Properties: Match.objectLike({
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }] },
        VersioningConfiguration: { Status: "Enabled" },
        LifecycleConfiguration: {
          Rules: [
            Match.objectLike({ NoncurrentVersionExpiration: { NoncurrentDays: 30 }, Status: "Enabled" }),
            Match.objectLike({ Prefix: "replays/", ExpirationInDays: 30, NoncurrentVersionExpiration: { NoncurrentDays: 1 }, Status: "Enabled" }),
          ],
        },
      }),
    });
    template.hasResourceProperties("AWS::S3::BucketPolicy", {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } })]) },
    });
  });

  it("rotates the credentials key", () => {
    template.hasResourceProperties("AWS::KMS::Key", { EnableKeyRotation: true });
  });
});

describe("the connection workflow", () => {
  it("deploys the shared ASL file with each task's function ARN substituted", () => {
    const [, stateMachine] = ofType("AWS::StepFunctions::StateMachine")[0]!;
    const substitutions = stateMachine.Properties.DefinitionSubstitutions as Record<string, unknown>;

    expect(stateMachine.Properties.DefinitionString).toBe(definitionText());
    expect(substitutions).toEqual(
      Object.fromEntries(Object.values(workflowTasks).map((task) => [task.placeholder, { "Fn::GetAtt": [functionFor(task.handler), "Arn"] }])),
    );
    // Every placeholder of the file has a value, so Step Functions receives a complete definition.
    const values = Object.fromEntries(Object.keys(substitutions).map((name) => [name, `arn-of-${name}`]));
    expect(() => substitutedDefinition(values)).not.toThrow();
  });

  it("leaves each browser task's state no timeout or heartbeat shorter than its function's", () => {
    const states = (substitutedDefinition(Object.fromEntries(Object.values(workflowTasks).map((task) => [task.placeholder, "arn"]))).States ?? {}) as Record<
      string,
      { TimeoutSeconds?: number; TimeoutSecondsPath?: string; HeartbeatSeconds?: number; HeartbeatSecondsPath?: string }
    >;
    for (const [state, task] of browserTasks) {
      const functionTimeout = resources[functionFor(task.handler)]!.Properties.Timeout as number;
      const { TimeoutSeconds, TimeoutSecondsPath, HeartbeatSeconds, HeartbeatSecondsPath } = states[state]!;
      expect({ TimeoutSecondsPath, HeartbeatSecondsPath }, state).toEqual({ TimeoutSecondsPath: undefined, HeartbeatSecondsPath: undefined });
      expect(TimeoutSeconds ?? Infinity, state).toBeGreaterThanOrEqual(functionTimeout);
      expect(HeartbeatSeconds ?? Infinity, state).toBeGreaterThanOrEqual(functionTimeout);
    }
  });

  it("logs every state transition without payloads, and traces", () => {
    template.hasResourceProperties("AWS::StepFunctions::StateMachine", {
      StateMachineType: "STANDARD",
      LoggingConfiguration: Match.objectLike({ Level: "ALL", IncludeExecutionData: false }),
      TracingConfiguration: { Enabled: true },
    });
  });
});

describe("observability", () => {
  it("charts every route's function on the dashboard, and queries the access log per route", () => {
    const [, dashboard] = ofType("AWS::CloudWatch::Dashboard")[0]!;
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const route of routes) {
      expect(body.split(JSON.stringify({ Ref: functionFor(route.handler) })).length - 1, route.name).toBeGreaterThanOrEqual(4);
    }
    for (const aggregate of ["count(*)", "pct(latencyMs, 50)", "pct(latencyMs, 99)", "by method, resource", "filter status >= 400", "filter status = 429"]) {
      expect(body).toContain(aggregate);
    }
  });

  it("writes access-log lines as JSON with the fields the dashboard queries", () => {
    const [, stage] = ofType("AWS::ApiGateway::Stage")[0]!;
    const format = (stage.Properties.AccessLogSetting as { Format: string }).Format;
    // API Gateway fills each $context variable; a number stands in for every one here.
    const line = JSON.parse(format.replace(/\$context\.[\w.]+/g, "1")) as Record<string, unknown>;

    expect(Object.keys(line)).toEqual(expect.arrayContaining(["method", "resource", "status", "latencyMs"]));
    expect(format).toContain('"status":$context.status,"latencyMs":$context.responseLatency');
  });

  it("alarms on the API's 5xx rate and on failed executions", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", { Namespace: "AWS/ApiGateway", MetricName: "5XXError", Statistic: "Average" });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", { Namespace: "AWS/States", MetricName: "ExecutionsFailed" });
  });

  it("outputs the API URL, table, bucket, state machine and dashboard URL", () => {
    for (const output of ["ApiUrl", "TableName", "BucketName", "StateMachineArn", "DashboardUrl"]) template.hasOutput(output, Match.anyValue());
  });
});

describe("cdk-nag AwsSolutions", () => {
  it("reports no finding that is not acknowledged with a reason", () => {
    const report = new AwsSolutionsChecks(app).validateScope(stack);

    expect(report.violations.map((violation) => `${violation.ruleName}: ${violation.violatingResources.map((r) => r.constructPath).join(", ")}`)).toEqual([]);
  });
});
