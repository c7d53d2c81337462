import { createLoginEngine } from "../login/http/engine.ts";
import { perConfig, targetPolicy } from "./config.ts";

/** Local mode may log in to loopback test sites; in AWS private and link-local targets are refused. */
export const httpLoginEngine = perConfig((config) => createLoginEngine({ allowPrivateTargets: targetPolicy(config).allowPrivateTargets }));
