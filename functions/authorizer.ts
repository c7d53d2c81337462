import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from "aws-lambda";
import { apiKeys } from "#shared/composition/api-keys.ts";
import { handoffTokens } from "#shared/composition/handoff.ts";
import { bearerCredential } from "#shared/domain/api-keys.ts";
import { headerValue } from "#shared/http/headers.ts";

/**
 * REQUEST authorizer: resolves the bearer credential to its org, which every handler reads from the
 * authorizer context. An API key reaches the whole API; a handoff token adds its connection to the
 * context, and the handlers let it through only on that connection's hosted-page routes. The policy
 * covers the whole API so API Gateway may cache it per credential.
 */
export async function handler(event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  const authorization = headerValue(event.headers, "authorization");
  const token = bearerCredential(authorization);
  const tokens = handoffTokens();
  if (token && tokens.isHandoffToken(token)) {
    const grant = await tokens.verify(token);
    if (!grant) throw new Error("Unauthorized");
    return allow(event, grant.org, {
      org: grant.org,
      connection_scope: grant.connectionId,
      connection_scope_expires_at: grant.expiresAt,
      connection_scope_token: grant.tokenId,
    });
  }
  const org = await apiKeys().authenticate(authorization);
  // API Gateway answers 401 only for this exact error message.
  if (!org) throw new Error("Unauthorized");
  return allow(event, org, { org });
}

function allow(event: APIGatewayRequestAuthorizerEvent, principalId: string, context: Record<string, string | number>): APIGatewayAuthorizerResult {
  const [arnPrefix, stage] = event.methodArn.split("/");
  return {
    principalId,
    policyDocument: {
      Version: "2012-10-17",
      Statement: [{ Action: "execute-api:Invoke", Effect: "Allow", Resource: `${arnPrefix}/${stage}/*` }],
    },
    context,
  };
}
