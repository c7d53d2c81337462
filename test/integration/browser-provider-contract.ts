import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserProvider, LaunchedBrowser } from "#shared/domain/browser-provider.ts";

export interface ContractSubject {
  browsers: BrowserProvider;
  /** A ref in this provider's own format that names no browser. */
  unknownRef: string;
  close?(): Promise<void>;
}

/**
 * What the pool core relies on from every browser provider, run against each one. One browser is
 * launched for the whole contract, since a launch is the costly part for a real provider.
 */
export function providerContract(name: string, makeSubject: () => Promise<ContractSubject>): void {
  describe(`the ${name} browser provider's contract`, () => {
    let subject: ContractSubject;
    let launched: LaunchedBrowser | undefined;

    beforeAll(async () => {
      subject = await makeSubject();
    });

    afterAll(async () => {
      if (launched) await subject?.browsers.destroy(launched.ref);
      await subject?.close?.();
    });

    const browser = () => {
      if (!launched) throw new Error("the contract's launch did not succeed");
      return launched;
    };

    it("lists a launched browser among the running ones", async () => {
      const sessionId = `bs_contract_${randomBytes(4).toString("hex")}`;
      launched = await subject.browsers.launch({ sessionId, startUrl: null });
      const devtools = new URL(launched.cdpWsUrl);
      expect(devtools.protocol).toBe("ws:");
      expect(devtools.pathname).toMatch(/\/devtools\/browser\/[A-Za-z0-9_-]+$/);
      expect(await subject.browsers.running()).toContain(launched.ref);
    });

    it("grants and ends a lease on a launched browser", async () => {
      const leaseId = new Date().toISOString();
      await subject.browsers.grantLease(browser().ref, { id: leaseId, token: randomBytes(32).toString("base64url"), expiresAt: new Date(Date.now() + 60_000) });
      await subject.browsers.endLease(browser().ref, leaseId);
    });

    it("no longer lists a destroyed browser, and ends its lease without error", async () => {
      const { ref } = browser();
      await subject.browsers.destroy(ref);
      expect(await subject.browsers.running()).not.toContain(ref);
      await subject.browsers.endLease(ref, new Date().toISOString());
    });

    it("destroys an unknown browser without error", async () => {
      await subject.browsers.destroy(subject.unknownRef);
    });
  });
}
