import type { APIGatewayProxyEvent } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { hostedLoginUrl } from "#shared/domain/flows/start.ts";
import { requestBaseUrl } from "#shared/http/base-url.ts";

/**
 * The parts of a REST API proxy event the base URL is read from. `path` and `requestContext.path`
 * as API Gateway sends them: on the execute-api host `path` leaves the stage out while
 * `requestContext.path` keeps it (AWS Lambda docs' sample event: path "/", requestContext.path
 * "/Prod/"); on a custom domain both keep the base path of the mapping ("/echo/foo/bar/" for both).
 */
function apiEvent(parts: { headers: Record<string, string>; resource: string; path: string; contextPath: string; domainName?: string }) {
  return {
    headers: parts.headers,
    resource: parts.resource,
    path: parts.path,
    requestContext: { path: parts.contextPath, resourcePath: parts.resource, domainName: parts.domainName },
  } as unknown as APIGatewayProxyEvent;
}

describe("the base URL of a request", () => {
  it("on the execute-api host: https, the host, and the stage, which only requestContext.path holds", () => {
    const event = apiEvent({
      headers: { Host: "70ixmpl4fl.execute-api.us-east-2.amazonaws.com", "X-Forwarded-Proto": "https" },
      resource: "/auth/connections/{id}/login",
      path: "/auth/connections/ac_1/login",
      contextPath: "/Prod/auth/connections/ac_1/login",
    });
    expect(requestBaseUrl(event)).toBe("https://70ixmpl4fl.execute-api.us-east-2.amazonaws.com/Prod");
  });

  it("on the execute-api host for a route at the root of a path parameter, a trailing slash sent", () => {
    const event = apiEvent({
      headers: { Host: "70ixmpl4fl.execute-api.us-east-2.amazonaws.com", "X-Forwarded-Proto": "https" },
      resource: "/login/{id}",
      path: "/login/ac_1/",
      contextPath: "/v1/login/ac_1/",
    });
    expect(requestBaseUrl(event)).toBe("https://70ixmpl4fl.execute-api.us-east-2.amazonaws.com/v1");
  });

  it("on a custom domain with a base path mapping, where event.path holds the base path too", () => {
    const event = apiEvent({
      headers: { Host: "auth.example.com", "X-Forwarded-Proto": "https" },
      resource: "/auth/connections/{id}/login",
      path: "/auth-api/auth/connections/ac_1/login",
      contextPath: "/auth-api/auth/connections/ac_1/login",
    });
    expect(requestBaseUrl(event)).toBe("https://auth.example.com/auth-api");
  });

  it("on a custom domain with a base path of two segments", () => {
    const event = apiEvent({
      headers: { Host: "example.com", "X-Forwarded-Proto": "https" },
      resource: "/login/{id}",
      path: "/services/auth/login/ac_1",
      contextPath: "/services/auth/login/ac_1",
    });
    expect(requestBaseUrl(event)).toBe("https://example.com/services/auth");
  });

  it("on a custom domain mapped at its root: no prefix", () => {
    const event = apiEvent({
      headers: { Host: "auth.example.com", "X-Forwarded-Proto": "https" },
      resource: "/auth/connections/{id}/login",
      path: "/auth/connections/ac_1/login",
      contextPath: "/auth/connections/ac_1/login",
    });
    expect(requestBaseUrl(event)).toBe("https://auth.example.com");
  });

  it("from the local gateway: plain http and no prefix", () => {
    const event = apiEvent({
      headers: { host: "127.0.0.1:8080", "x-forwarded-proto": "http" },
      resource: "/auth/connections/{id}/login",
      path: "/auth/connections/ac_1/login",
      contextPath: "/auth/connections/ac_1/login",
    });
    expect(requestBaseUrl(event)).toBe("http://127.0.0.1:8080");
  });

  it("https when no protocol is forwarded, and the context's domain name when no host is sent", () => {
    const event = apiEvent({
      headers: {},
      resource: "/auth/connections/{id}/login",
      path: "/auth/connections/ac_1/login",
      contextPath: "/prod/auth/connections/ac_1/login",
      domainName: "abc123.execute-api.us-east-1.amazonaws.com",
    });
    expect(requestBaseUrl(event)).toBe("https://abc123.execute-api.us-east-1.amazonaws.com/prod");
  });

  it("the hosted URL: the page under the base, the code as a query parameter", () => {
    expect(hostedLoginUrl("https://auth.example.com/v1", "ac_1", "code+/=")).toBe("https://auth.example.com/v1/login/ac_1?code=code%2B%2F%3D");
  });
});
