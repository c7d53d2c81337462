import { SFNClient } from "@aws-sdk/client-sfn";

/** The official client against the local Step Functions endpoint: an independent check of what it serves. */
export function officialSfnClient(endpoint: string): SFNClient {
  return new SFNClient({ region: "us-east-1", endpoint });
}
