import { createSfnClient, sfnWorkflowEngine } from "../workflow/engine.ts";
import { perConfig } from "./config.ts";

export const workflowEngine = perConfig((config) =>
  sfnWorkflowEngine(createSfnClient({ region: config.AWS_REGION, endpoint: config.SFN_ENDPOINT }), config.STATE_MACHINE_ARN),
);
