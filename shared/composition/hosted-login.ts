import { hostedLoginAssets } from "../hosted-login/asset-files.ts";
import { hostedPageCore, pageSecurityHeaders } from "../hosted-login/hosted-page.ts";
import { pageTemplate } from "../hosted-login/page-document.ts";
import { redirectOrigins } from "../hosted-login/redirects.ts";
import { perConfig } from "./config.ts";

/** The hosted login page: its document, read at the first request, and where it may send the user. */
export const hostedLoginPage = /* @__PURE__ */ perConfig((config) =>
  hostedPageCore({ template: pageTemplate(), redirectOrigins: redirectOrigins(config.REDIRECT_ORIGINS, config.DEPLOYMENT_MODE) }),
);

/** The page route's security headers: apart from the page, so an answer that failed to build it still has them. */
export const hostedLoginPageHeaders = /* @__PURE__ */ perConfig((config) => pageSecurityHeaders(config.FRAME_ANCESTORS.trim()));

export const hostedLoginAssetFiles = /* @__PURE__ */ perConfig(() => hostedLoginAssets());
