import { Duration, RemovalPolicy, Validations } from "aws-cdk-lib";
import {
  AccessLogField,
  AccessLogFormat,
  AuthorizationType,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RequestAuthorizer,
  ResponseTransferMode,
  ResponseType,
  RestApi,
} from "aws-cdk-lib/aws-apigateway";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { dependencyOutageMessage } from "#shared/domain/errors.ts";
import type { ErrorCode } from "#shared/errors.ts";
import { gatewayCorsHeaders, type AllowedOrigins } from "#shared/http/cors.ts";
import { codeStatus } from "#shared/http/error-statuses.ts";
import { authorizer, binaryMediaTypes, corsPaths, corsPreflight, routes, type Route } from "#shared/routes.ts";
import { ServiceFunction, type FunctionResources } from "./service-function.ts";

export interface ApiProps {
  resources: FunctionResources;
  /** How long API Gateway trusts an authorizer answer for a key: the delay before a revoked key stops working. */
  keyCacheTtl: Duration;
  /** Steady requests per second and burst for the whole stage. */
  throttle: { rateLimit: number; burstLimit: number };
  /** `ALLOWED_ORIGINS` as deployed: the CORS headers of API Gateway's own answers are fixed from it. */
  allowedOrigins: AllowedOrigins;
  /** In place of the route table's `reservedConcurrency` on the routes that set one: a number, or "none" to reserve nothing. */
  streamConcurrency?: number | "none";
}

export interface RouteFunction {
  route: Route;
  handler: ServiceFunction;
}

/**
 * API Gateway's own answers get our error body rather than its `{"message": ...}`: clients (the
 * official one included) read `code` and honour `x-should-retry`.
 */
/**
 * One JSON line per request; the dashboard's per-route table queries it (Logs Insights), which costs
 * far less than API Gateway's per-method metrics (7 billed metrics per route). `status` and
 * `latencyMs` are always numbers; the integration fields are "-" when no integration ran.
 */
const accessLogFormat = AccessLogFormat.custom(
  `{"requestId":"${AccessLogField.contextRequestId()}","time":"${AccessLogField.contextRequestTime()}",` +
    `"method":"${AccessLogField.contextHttpMethod()}","resource":"${AccessLogField.contextResourcePath()}",` +
    `"status":${AccessLogField.contextStatus()},"latencyMs":${AccessLogField.contextResponseLatency()},` +
    `"integrationMs":"${AccessLogField.contextIntegrationLatency()}","bytes":"${AccessLogField.contextResponseLength()}",` +
    `"org":"${AccessLogField.contextAuthorizerPrincipalId()}","ip":"${AccessLogField.contextIdentitySourceIp()}"}`,
);

/** A gateway response with one of the API's own codes answers with the status the one table gives it. */
const answeredAs = (code: ErrorCode) => ({ code, statusCode: String(codeStatus(code)) });

const gatewayErrors = [
  { type: ResponseType.UNAUTHORIZED, ...answeredAs("unauthorized"), message: "missing or unknown API key", retry: false },
  // The authorizer's policy denied the call.
  { type: ResponseType.ACCESS_DENIED, ...answeredAs("forbidden"), message: "the credential does not reach this route", retry: false },
  // API Gateway answers an unknown path or method with 403 "Missing Authentication Token".
  { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, ...answeredAs("not_found"), message: "no such route", retry: false },
  { type: ResponseType.REQUEST_TOO_LARGE, ...answeredAs("payload_too_large"), message: "request body too large", retry: false },
  // The authorizer failed rather than refused: it could not read the key (the table unavailable).
  { type: ResponseType.AUTHORIZER_FAILURE, ...answeredAs("service_unavailable"), message: dependencyOutageMessage, retry: true },
  // API Gateway's own throttling of the account or the stage.
  { type: ResponseType.THROTTLED, ...answeredAs("rate_limited"), message: "too many requests", retry: true },
  // Any other refusal of API Gateway's own (its status kept), so no answer of it lacks our body and headers.
  { type: ResponseType.DEFAULT_4XX, statusCode: undefined, code: "bad_request", message: "request refused by the API gateway", retry: false },
  { type: ResponseType.DEFAULT_5XX, statusCode: undefined, code: "internal_error", message: "internal error", retry: true },
] as const;

/**
 * Why each route without an authorizer needs none (cdk-nag's APIG4 asks): what its credential is,
 * or why it has nothing to protect.
 */
const authNoneReasons: Record<string, string> = {
  ExchangeHandoffCode:
    "takes no API key: the one-time handoff code in its body is the credential (256 random bits, stored hashed, single use, short-lived), checked by the handler.",
  HostedLoginPage:
    "serves the same static document to anyone and reads no data: the handoff code in its query is left to the page's script, which spends it at the exchange route.",
  HostedLoginAsset: "serves the hosted login page's static script and style; it takes no credential and reads no data.",
};

/**
 * The REST API: one Lambda per route of the route table, every method behind the bearer authorizer
 * except the routes marked `auth: "none"`.
 */
export class Api extends Construct {
  readonly restApi: RestApi;
  readonly accessLogs: LogGroup;
  readonly routeFunctions: readonly RouteFunction[];
  readonly authorizerFunction: ServiceFunction;
  /** Answers the CORS preflight (`OPTIONS`) on the paths of the route table's `cors` routes. */
  readonly preflightFunction: ServiceFunction;

  constructor(scope: Construct, id: string, props: ApiProps) {
    super(scope, id);
    this.authorizerFunction = new ServiceFunction(this, authorizer.name, {
      handler: authorizer.handler,
      description: `API authorizer: ${authorizer.handler}`,
      grants: authorizer.grants,
      resources: props.resources,
    });
    const requestAuthorizer = new RequestAuthorizer(this, "BearerKey", {
      handler: this.authorizerFunction.function,
      identitySources: [IdentitySource.header("Authorization")],
      resultsCacheTtl: props.keyCacheTtl,
    });

    this.accessLogs = new LogGroup(this, "AccessLogs", { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.restApi = new RestApi(this, "RestApi", {
      description: "Auth connection service",
      // Regional: a streamed download may idle up to 5 minutes, against 30 seconds at the edge.
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      binaryMediaTypes: [...binaryMediaTypes],
      // The account-level role API Gateway needs before it can write access and execution logs.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.DESTROY,
      deployOptions: {
        stageName: "v1",
        throttlingRateLimit: props.throttle.rateLimit,
        throttlingBurstLimit: props.throttle.burstLimit,
        loggingLevel: MethodLoggingLevel.ERROR,
        // Request and response bodies hold credentials and profiles: never in the execution log.
        dataTraceEnabled: false,
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat,
      },
      defaultMethodOptions: { authorizer: requestAuthorizer, authorizationType: AuthorizationType.CUSTOM },
    });
    // Header values in a gateway response are quoted literals.
    const corsHeaders = Object.fromEntries(Object.entries(gatewayCorsHeaders(props.allowedOrigins)).map(([name, value]) => [name, `'${value}'`]));
    for (const error of gatewayErrors) {
      this.restApi.addGatewayResponse(error.code, {
        type: error.type,
        ...(error.statusCode ? { statusCode: error.statusCode } : {}),
        responseHeaders: {
          "x-should-retry": `'${String(error.retry)}'`,
          "content-type": "'application/json'",
          ...(error.retry ? { "retry-after": "'1'" } : {}),
          ...corsHeaders,
        },
        templates: { "application/json": JSON.stringify({ code: error.code, message: error.message }) },
      });
    }

    this.routeFunctions = routes.map((route) => {
      const handler = new ServiceFunction(this, route.name, {
        handler: route.handler,
        description: `${route.method} ${route.path}: ${route.handler}`,
        grants: route.grants,
        resources: props.resources,
        // A streamed answer may outlast API Gateway's 29 s integration limit; the stream's idle limit is 5 minutes.
        ...(route.timeoutSeconds ? { timeout: Duration.seconds(route.timeoutSeconds) } : route.streaming ? { timeout: Duration.minutes(5) } : {}),
        reservedConcurrency: reservedConcurrencyOf(route, props.streamConcurrency),
      });
      const integration = new LambdaIntegration(handler.function, {
        responseTransferMode: route.streaming ? ResponseTransferMode.STREAM : ResponseTransferMode.BUFFERED,
      });
      const method = this.restApi.root
        .resourceForPath(route.path)
        .addMethod(route.method, integration, route.auth === "none" ? { authorizationType: AuthorizationType.NONE } : {});
      if (route.auth === "none") {
        const reason = authNoneReasons[route.name];
        if (!reason) throw new Error(`route ${route.name} has auth "none": say why in authNoneReasons`);
        Validations.of(method).acknowledge({ id: "AwsSolutions-APIG4", reason: `${route.name} ${reason}` });
      }
      return { route, handler };
    });

    this.preflightFunction = new ServiceFunction(this, corsPreflight.name, {
      handler: corsPreflight.handler,
      description: `OPTIONS on the cors routes' paths: ${corsPreflight.handler}`,
      grants: corsPreflight.grants,
      resources: props.resources,
    });
    const preflightIntegration = new LambdaIntegration(this.preflightFunction.function);
    for (const path of corsPaths.keys()) {
      const method = this.restApi.root.resourceForPath(path).addMethod("OPTIONS", preflightIntegration, { authorizationType: AuthorizationType.NONE });
      Validations.of(method).acknowledge({
        id: "AwsSolutions-APIG4",
        reason: "A browser sends the CORS preflight without credentials; it reads no data and changes nothing, it only names the methods and headers the path takes.",
      });
    }

    Validations.of(this.restApi).acknowledge(
      { id: "AwsSolutions-APIG2", reason: "Every handler validates its request with zod and answers 400 with the error body naming the field." },
      { id: "AwsSolutions-APIG3", reason: "Per-key authorization and stage throttling guard the API; WAF is left to deployers who want it (from about $6 a month)." },
      { id: "AwsSolutions-COG4", reason: "Callers are machines holding API keys, checked by the Lambda REQUEST authorizer; there are no user-pool users." },
      {
        id: "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]",
        reason: "API Gateway's account-level logging role uses AWS's policy for it, the documented setup for access logs.",
      },
    );
  }
}

function reservedConcurrencyOf(route: Route, deployed: number | "none" | undefined): number | undefined {
  if (route.reservedConcurrency === undefined || deployed === "none") return undefined;
  return deployed ?? route.reservedConcurrency;
}
