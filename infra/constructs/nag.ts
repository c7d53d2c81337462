import { Stack, Validations } from "aws-cdk-lib";
import { flattenCfnReference } from "cdk-nag/lib/utils/flatten-cfn-reference.js";
import type { IConstruct } from "constructs";

/**
 * Acknowledges cdk-nag's wildcard finding (AwsSolutions-IAM5) for exactly one resource pattern on
 * `scope`, so any other wildcard that appears later is still reported. cdk-nag names a finding by
 * the flattened CloudFormation reference, hence the same flattening here.
 */
export function acknowledgeWildcard(scope: IConstruct, resource: string, reason: string): void {
  const flattened = resource === "*" ? resource : flattenCfnReference(Stack.of(scope).resolve(resource));
  Validations.of(scope).acknowledge({ id: `AwsSolutions-IAM5[Resource::${flattened}]`, reason });
}
