import { hostedLoginAssets } from "../hosted-login/asset-files.ts";
import { hostedPageCore } from "../hosted-login/hosted-page.ts";
import { pageTemplate } from "../hosted-login/page-document.ts";
import { redirectOrigins } from "../hosted-login/redirects.ts";
import { perConfig } from "./config.ts";

/** The hosted login page: its document, read at the first request, and the settings it is served with. */
export const hostedLoginPage = /* @__PURE__ */ perConfig((config) =>
  hostedPageCore({
    template: pageTemplate(),
    redirectOrigins: redirectOrigins(config.REDIRECT_ORIGINS, config.DEPLOYMENT_MODE),
    frameAncestors: config.FRAME_ANCESTORS.trim(),
  }),
);

export const hostedLoginAssetFiles = /* @__PURE__ */ perConfig(() => hostedLoginAssets());
