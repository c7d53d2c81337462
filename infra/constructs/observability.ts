import { Duration } from "aws-cdk-lib";
import type { RestApi } from "aws-cdk-lib/aws-apigateway";
import {
  Alarm,
  AlarmWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  LogQueryVisualizationType,
  LogQueryWidget,
  Metric,
  TextWidget,
  TreatMissingData,
  type IWidget,
} from "aws-cdk-lib/aws-cloudwatch";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import type { ILogGroup } from "aws-cdk-lib/aws-logs";
import type { StateMachine } from "aws-cdk-lib/aws-stepfunctions";
import { Construct } from "constructs";
import { metricNamespace } from "#shared/log.ts";
import type { RouteFunction } from "./api.ts";

/** The re-auth task counts each re-auth as an embedded metric (shared/log.ts). */
const reauthMetric = { namespace: metricNamespace, metricName: "ReAuths" } as const;

export interface ObservabilityProps {
  dashboardName: string;
  restApi: RestApi;
  /** The API's access log: one JSON line per request with method, resource, status and latency. */
  accessLogs: ILogGroup;
  routes: readonly RouteFunction[];
  stateMachine: StateMachine;
  healthCheck: IFunction;
  functions: readonly IFunction[];
}

const period = Duration.minutes(5);

/**
 * The dashboard and the two alarms (API 5xx rate, failed executions). Per-route figures come from
 * each route's own function (Lambda metrics are free) and from the access log, not from API
 * Gateway's per-method metrics, which would bill 7 metrics per route.
 */
export class Observability extends Construct {
  readonly dashboard: Dashboard;
  readonly serverErrorAlarm: Alarm;
  readonly failedExecutionsAlarm: Alarm;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { restApi, stateMachine, routes } = props;
    const perRoute = (title: string, metric: (fn: IFunction, label: string) => Metric) =>
      new GraphWidget({ title, width: 12, left: routes.map(({ route, handler }) => metric(handler.function, route.name)) });
    const accessLogTable = (title: string, query: string[]) =>
      new LogQueryWidget({ title, width: 12, height: 8, logGroupNames: [props.accessLogs.logGroupName], view: LogQueryVisualizationType.TABLE, queryLines: query });

    this.serverErrorAlarm = new Alarm(this, "ApiServerErrorRate", {
      alarmDescription: "More than 5% of API requests answered 5xx in two of three 5-minute periods",
      // The Average of 5XXError is the fraction of requests that answered 5xx.
      metric: restApi.metricServerError({ statistic: "Average", period }),
      threshold: 0.05,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.failedExecutionsAlarm = new Alarm(this, "FailedExecutions", {
      alarmDescription: "A connection workflow execution failed: that connection is no longer health-checked",
      metric: stateMachine.metricFailed({ statistic: "Sum", period }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const rows: IWidget[][] = [
      [new TextWidget({ markdown: "# Auth connection service\nPer route: requests, errors and latency. Workflow: health checks, re-auths, executions. Throttles.", width: 24, height: 2 })],
      [
        accessLogTable("Requests and latency per route (access log)", [
          "stats count(*) as requests, pct(latencyMs, 50) as p50_ms, pct(latencyMs, 99) as p99_ms by method, resource",
          "sort requests desc",
        ]),
        accessLogTable("4xx and 5xx per route (access log)", [
          "filter status >= 400",
          "stats count(*) as errors by method, resource, status",
          "sort errors desc",
        ]),
      ],
      [
        perRoute("Requests per route (invocations)", (fn, label) => fn.metricInvocations({ period, label })),
        perRoute("Unhandled errors per route", (fn, label) => fn.metricErrors({ period, label })),
      ],
      [
        perRoute("p50 duration per route (ms)", (fn, label) => fn.metricDuration({ period, label, statistic: "p50" })),
        perRoute("p99 duration per route (ms)", (fn, label) => fn.metricDuration({ period, label, statistic: "p99" })),
      ],
      [
        new GraphWidget({
          title: "API 4xx and 5xx",
          width: 12,
          left: [restApi.metricClientError({ period, label: "4xx" }), restApi.metricServerError({ period, label: "5xx" })],
          right: [restApi.metricLatency({ period, statistic: "p99", label: "p99 latency (ms)" })],
        }),
        new AlarmWidget({ title: "API 5xx rate (alarm)", alarm: this.serverErrorAlarm, width: 12 }),
      ],
      [
        new GraphWidget({
          title: "Health checks",
          width: 8,
          left: [props.healthCheck.metricInvocations({ period, label: "checks" }), props.healthCheck.metricErrors({ period, label: "errors" })],
        }),
        new GraphWidget({ title: "Re-auths", width: 8, left: [new Metric({ ...reauthMetric, statistic: "Sum", period, label: "re-auths" })] }),
        new GraphWidget({
          title: "Workflow executions",
          width: 8,
          left: [
            stateMachine.metricStarted({ period, label: "started" }),
            stateMachine.metricFailed({ period, label: "failed" }),
            stateMachine.metricTimedOut({ period, label: "timed out" }),
          ],
        }),
      ],
      [
        new GraphWidget({ title: "Lambda throttles", width: 12, left: props.functions.map((fn) => fn.metricThrottles({ period, statistic: "Sum" })) }),
        accessLogTable("Requests throttled by the stage (429)", ["filter status = 429", "stats count(*) as throttled by bin(5m)"]),
      ],
    ];
    this.dashboard = new Dashboard(this, "Dashboard", { dashboardName: props.dashboardName, widgets: rows });
  }
}
