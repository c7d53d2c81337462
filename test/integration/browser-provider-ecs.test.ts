import { fakeEcs, fakeEcsBrowsers, standInTaskPort } from "../support/fake-ecs.ts";
import { providerContract } from "./browser-provider-contract.ts";

// The ECS API cannot run here: ECS is aws-sdk-client-mock's, and the task's lease proxy a local stand-in.
providerContract("ECS", async () => {
  const taskPort = await standInTaskPort();
  const { ecs } = fakeEcs();
  const browsers = fakeEcsBrowsers(ecs, taskPort.port);
  return { browsers, unknownRef: "arn:aws:ecs:eu-west-1:123456789012:task/browsers/unknown", close: taskPort.stop };
});
