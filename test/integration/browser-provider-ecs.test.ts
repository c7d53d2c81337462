import { fakeEcs, fakeEcsBrowsers, standInRouter } from "../support/fake-ecs.ts";
import { providerContract } from "./browser-provider-contract.ts";

// The ECS API cannot run here: ECS is aws-sdk-client-mock's, and the task's lease proxy a local stand-in.
providerContract("ECS", async () => {
  const router = await standInRouter();
  const { ecs } = fakeEcs();
  const browsers = fakeEcsBrowsers(ecs, router.url);
  return { browsers, unknownRef: "arn:aws:ecs:eu-west-1:123456789012:task/browsers/unknown", close: router.stop };
});
