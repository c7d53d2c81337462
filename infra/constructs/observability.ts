import { Duration } from "aws-cdk-lib";
import type { RestApi } from "aws-cdk-lib/aws-apigateway";
import { Alarm, AlarmWidget, ComparisonOperator, Dashboard, GraphWidget, Metric, TextWidget, TreatMissingData, type IWidget } from "aws-cdk-lib/aws-cloudwatch";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import type { StateMachine } from "aws-cdk-lib/aws-stepfunctions";
import { Construct } from "constructs";
import type { RouteFunction } from "./api.ts";

/** Where the re-auth task is to publish its outcomes as embedded metrics; the widget waits for it. */
const reauthMetric = { namespace: "AuthConnectionService", metricName: "ReAuths" } as const;

export interface ObservabilityProps {
  dashboardName: string;
  restApi: RestApi;
  routes: readonly RouteFunction[];
  stateMachine: StateMachine;
  healthCheck: IFunction;
  functions: readonly IFunction[];
}

const period = Duration.minutes(5);

/** The dashboard (per route, per workflow) and the two alarms: API 5xx rate and failed executions. */
export class Observability extends Construct {
  readonly dashboard: Dashboard;
  readonly serverErrorAlarm: Alarm;
  readonly failedExecutionsAlarm: Alarm;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { restApi, stateMachine } = props;
    // Per-method metrics carry these dimensions when the stage has metricsEnabled.
    const routeMetric = (route: RouteFunction["route"], metricName: string, statistic: string) =>
      new Metric({
        namespace: "AWS/ApiGateway",
        metricName,
        statistic,
        period,
        label: route.name,
        dimensionsMap: { ApiName: restApi.restApiName, Stage: restApi.deploymentStage.stageName, Method: route.method, Resource: route.path },
      });
    const perRoute = (title: string, metricName: string, statistic: string) =>
      new GraphWidget({ title, width: 12, left: props.routes.map(({ route }) => routeMetric(route, metricName, statistic)) });

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
      alarmDescription: "A connection workflow execution failed, timed out or was aborted by an error: that connection is no longer checked",
      metric: stateMachine.metricFailed({ statistic: "Sum", period }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const rows: IWidget[][] = [
      [new TextWidget({ markdown: `# Auth connection service\nAPI stage \`${restApi.deploymentStage.stageName}\`; alarms: API 5xx rate, failed executions.`, width: 24, height: 2 })],
      [perRoute("Requests per route", "Count", "Sum"), perRoute("p50 latency per route (ms)", "Latency", "p50")],
      [perRoute("4xx per route", "4XXError", "Sum"), perRoute("5xx per route", "5XXError", "Sum")],
      [
        perRoute("p99 latency per route (ms)", "Latency", "p99"),
        new AlarmWidget({ title: "API 5xx rate (alarm)", alarm: this.serverErrorAlarm, width: 12 }),
      ],
      [
        new GraphWidget({
          title: "Health checks",
          width: 8,
          left: [props.healthCheck.metricInvocations({ period, label: "checks" }), props.healthCheck.metricErrors({ period, label: "errors" })],
        }),
        new GraphWidget({
          title: "Re-auths",
          width: 8,
          left: [new Metric({ ...reauthMetric, statistic: "Sum", period, label: "re-auths" })],
        }),
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
        new GraphWidget({
          title: "Lambda throttles",
          width: 12,
          left: props.functions.map((fn) => fn.metricThrottles({ period, statistic: "Sum" })),
        }),
        new GraphWidget({
          title: "API 4xx (throttled 429s included) and workflow throttles",
          width: 12,
          left: [restApi.metricClientError({ period, label: "API 4xx (429 included)" }), stateMachine.metricThrottled({ period, label: "state machine throttled" })],
        }),
      ],
    ];
    this.dashboard = new Dashboard(this, "Dashboard", { dashboardName: props.dashboardName, widgets: rows });
  }
}
