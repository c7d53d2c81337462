import { handoffCodeIssuer, handoffCore, handoffSigningKey, handoffTokenVerifier } from "../domain/handoff.ts";
import { perConfig } from "./config.ts";
import { handoffStore } from "./table.ts";

/**
 * The secret box is imported only once a signing key must be opened or made: the authorizer, which
 * runs for every request, keeps the box's clients out of the path of API-key requests.
 */
const signingKey = /* @__PURE__ */ perConfig((config) =>
  handoffSigningKey({ store: handoffStore(config), box: async () => (await import("./secrets.ts")).secretBox(config) }),
);

export const handoffCodes = /* @__PURE__ */ perConfig((config) => handoffCodeIssuer({ store: handoffStore(config) }));

export const handoff = /* @__PURE__ */ perConfig((config) =>
  handoffCore({ store: handoffStore(config), signingKey: signingKey(config), tokenSeconds: config.HANDOFF_TOKEN_SECONDS }),
);

export const handoffTokens = /* @__PURE__ */ perConfig((config) => handoffTokenVerifier({ signingKey: signingKey(config) }));
