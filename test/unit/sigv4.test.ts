import { describe, expect, it } from "vitest";
import { sha256Hex, sigV4Signer } from "#shared/aws/sigv4.ts";

/** The credentials and instant of AWS's published S3 signature examples. */
const exampleCredentials = { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" };
const exampleInstant = new Date("2013-05-24T00:00:00Z");
const emptyPayload = sha256Hex("");

const signatureOf = (headers: Record<string, string>) => /Signature=([0-9a-f]{64})$/.exec(headers.authorization ?? "")?.[1];

describe("sigV4Signer", () => {
  const sign = sigV4Signer({ service: "s3", region: "us-east-1" });

  it("reproduces AWS's published GET Object example", () => {
    // Act
    const headers = sign(
      { method: "GET", url: new URL("https://examplebucket.s3.amazonaws.com/test.txt"), headers: { Range: "bytes=0-9" }, payloadHash: emptyPayload },
      exampleCredentials,
      exampleInstant,
    );

    // Assess
    expect(headers.authorization).toBe(
      "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
    );
    expect(headers["x-amz-date"]).toBe("20130524T000000Z");
  });

  it("reproduces AWS's published examples with a query: a bare sub-resource and sorted parameters", () => {
    // Act
    const lifecycle = sign({ method: "GET", url: new URL("https://examplebucket.s3.amazonaws.com/?lifecycle"), headers: {}, payloadHash: emptyPayload }, exampleCredentials, exampleInstant);
    const listing = sign(
      { method: "GET", url: new URL("https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J"), headers: {}, payloadHash: emptyPayload },
      exampleCredentials,
      exampleInstant,
    );

    // Assess
    expect(signatureOf(lifecycle)).toBe("fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
    expect(signatureOf(listing)).toBe("34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
  });

  it("sends and signs a role's session token", () => {
    // Act
    const headers = sign(
      { method: "POST", url: new URL("https://dynamodb.us-east-1.amazonaws.com/"), headers: {}, payloadHash: emptyPayload },
      { ...exampleCredentials, sessionToken: "token-of-the-role" },
      exampleInstant,
    );

    // Assess
    expect(headers["x-amz-security-token"]).toBe("token-of-the-role");
    expect(headers.authorization).toContain("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,");
  });

  it("derives a new signing key when the day or the secret changes", () => {
    // Prepare
    const request = { method: "GET", url: new URL("https://examplebucket.s3.amazonaws.com/test.txt"), headers: { Range: "bytes=0-9" }, payloadHash: emptyPayload };
    const published = "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";

    // Act
    const nextDay = signatureOf(sign(request, exampleCredentials, new Date("2013-05-25T00:00:00Z")));
    const otherSecret = signatureOf(sign(request, { ...exampleCredentials, secretAccessKey: "another" }, exampleInstant));
    const again = signatureOf(sign(request, exampleCredentials, exampleInstant));

    // Assess
    expect(nextDay).not.toBe(published);
    expect(otherSecret).not.toBe(published);
    expect(again).toBe(published);
  });
});
