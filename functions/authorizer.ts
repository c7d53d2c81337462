import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from "aws-lambda";
import { apiKeys } from "#shared/composition/api-keys.ts";
import { headerValue } from "#shared/http/headers.ts";

/**
 * REQUEST authorizer: resolves the bearer key to its org, which every handler reads from the
 * authorizer context. The policy covers the whole API so API Gateway may cache it per key.
 */
export async function handler(event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  const org = await apiKeys().authenticate(headerValue(event.headers, "authorization"));
  // API Gateway answers 401 only for this exact error message.
  if (!org) throw new Error("Unauthorized");
  const [arnPrefix, stage] = event.methodArn.split("/");
  return {
    principalId: org,
    policyDocument: {
      Version: "2012-10-17",
      Statement: [{ Action: "execute-api:Invoke", Effect: "Allow", Resource: `${arnPrefix}/${stage}/*` }],
    },
    context: { org },
  };
}
