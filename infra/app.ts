import { App } from "aws-cdk-lib";
import { authConnectionApp } from "./stack.ts";

authConnectionApp(new App(), { env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } });
