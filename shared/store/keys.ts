/**
 * Every key the store writes, in one place. The org is part of every partition key, so a read
 * with the wrong org misses by construction.
 */
export const timelinePrefix = "EVENT#";

export const keys = {
  connection: (org: string, id: string) => ({ pk: `CONN#${org}#${id}`, sk: "CONN" }),
  /** In the connection's partition, so one Query reads its timeline, newest first. */
  timelineEvent: (org: string, connectionId: string, timestamp: string, eventId: string) => ({
    pk: `CONN#${org}#${connectionId}`,
    sk: `${timelinePrefix}${timestamp}#${eventId}`,
  }),
  /** Keyed by profile id, not name, so a profile rename cannot orphan the guard. */
  connectionGuard: (org: string, profileId: string, domain: string) => ({
    pk: `CONNKEY#${org}#${profileId}#${domain}`,
    sk: "CONNKEY",
  }),
  profile: (org: string, id: string) => ({ pk: `PROFILE#${org}#${id}`, sk: "PROFILE" }),
  profileName: (org: string, name: string) => ({ pk: `PROFILENAME#${org}#${name}`, sk: "PROFILENAME" }),
  apiKey: (keyHash: string) => ({ pk: `APIKEY#${keyHash}`, sk: "APIKEY" }),
  /** Keyed by the code's SHA-256, so the table never holds a usable code. */
  handoffCode: (codeHash: string) => ({ pk: `HANDOFF#${codeHash}`, sk: "HANDOFF" }),
  /** One per key name, org-free: the service signs with it, not a tenant. */
  signingKey: (name: string) => ({ pk: `SIGNINGKEY#${name}`, sk: "SIGNINGKEY" }),
  /** A pool and its browsers share one partition, so one Query reads the pool with every browser. */
  pool: (org: string, id: string) => ({ pk: `POOL#${org}#${id}`, sk: "POOL" }),
  poolBrowser: (org: string, poolId: string, sessionId: string) => ({ pk: `POOL#${org}#${poolId}`, sk: `BROWSER#${sessionId}` }),
  poolName: (org: string, name: string) => ({ pk: `POOLNAME#${org}#${name}`, sk: "POOLNAME" }),
  /** Org-free: the filler serves every org's pools, one pass at a time. */
  fillerPass: () => ({ pk: "FILLERPASS", sk: "FILLERPASS" }),
  /** The open event streams of a connection: one item, so a conditional write sees them all. */
  streamSlots: (org: string, connectionId: string) => ({ pk: `STREAMS#${org}#${connectionId}`, sk: "STREAMS" }),
  credential: (org: string, id: string) => ({ pk: `CRED#${org}#${id}`, sk: "CRED" }),
  credentialName: (org: string, name: string) => ({ pk: `CREDNAME#${org}#${name}`, sk: "CREDNAME" }),
};

export const indexKeys = {
  connectionsOfOrg: (org: string) => `ORG#${org}#CONN`,
  connectionsOfProfile: (org: string, profileId: string) => `ORG#${org}#CONN#PROFILE#${profileId}`,
  connectionsOfDomain: (org: string, domain: string) => `ORG#${org}#CONN#DOMAIN#${domain}`,
  profilesOfOrg: (org: string) => `ORG#${org}#PROFILE`,
  poolsOfOrg: (org: string) => `ORG#${org}#POOL`,
  credentialsOfOrg: (org: string) => `ORG#${org}#CRED`,
  credentialsOfDomain: (org: string, domain: string) => `ORG#${org}#CRED#DOMAIN#${domain}`,
  /** Every org's pools: the work list of the process that fills them; never served to an API caller. */
  poolsOfAllOrgs: () => "POOLS",
  /** Sort key of every list index: newest first under a reverse query, ties broken by id. */
  createdOrder: (createdAt: string, id: string) => `${createdAt}#${id}`,
};
