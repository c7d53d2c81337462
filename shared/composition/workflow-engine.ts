import { createSfnClient, sfnFlowSignal, sfnWorkflowEngine } from "../workflow/engine.ts";
import { perConfig } from "./config.ts";

const sfnClient = perConfig((config) => createSfnClient({ region: config.AWS_REGION, endpoint: config.SFN_ENDPOINT }));

export const workflowEngine = perConfig((config) => sfnWorkflowEngine(sfnClient(config), config.STATE_MACHINE_ARN));

export const flowSignal = perConfig((config) => sfnFlowSignal(sfnClient(config)));
