import { SFNClient } from "@aws-sdk/client-sfn";
import { sfnFlowSignal, sfnWorkflowEngine } from "../step-functions/engine.ts";
import { perConfig } from "./config.ts";
import { resourceName } from "../config.ts";
import { outagesAsServiceUnavailable, sdkClientSettings } from "./sdk-settings.ts";

const sfnClient = perConfig((config) => {
  const sfn = new SFNClient(sdkClientSettings(config, config.SFN_ENDPOINT));
  outagesAsServiceUnavailable(sfn);
  return sfn;
});

export const workflowEngine = perConfig((config) => sfnWorkflowEngine(sfnClient(config), resourceName(config, "STATE_MACHINE_ARN")));

export const flowSignal = perConfig((config) => sfnFlowSignal(sfnClient(config)));
