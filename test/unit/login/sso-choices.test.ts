import { describe, expect, it } from "vitest";
import { analyzeStep } from "#shared/login/forms.ts";
import { parsePage } from "#shared/login/page.ts";

const url = "https://app.example/login";
const passwordForm = `<form method="post" action="/session"><label for="e">Email</label><input id="e" name="email" type="email"><label for="p">Password</label><input id="p" name="password" type="password"><button type="submit">Log in</button></form>`;

function stepOf(main: string) {
  const step = analyzeStep(parsePage(`<html><head><title>Welcome</title></head><body><main>${main}</main></body></html>`, url), null);
  expect(step).not.toBeNull();
  return step!;
}

describe("identity providers' buttons of every shape", () => {
  it.each([
    ["an <a> with a click handler and no href, beside a password form", `${passwordForm}<a class="btn" onclick="go()">Log in with TestIdP</a>`, "Log in with TestIdP", "testidp"],
    ["an <a href=\"#\">", `${passwordForm}<a href="#" class="btn">Sign in with TestIdP</a>`, "Sign in with TestIdP", "testidp"],
    ["an <a href=\"javascript:...\">", `${passwordForm}<a href="javascript:void(0)">Continue with Acme ID</a>`, "Continue with Acme ID", "acme_id"],
    ["a div with role=button, on a page without a password form", `<h1>Welcome</h1><div role="button" tabindex="0">Sign in with TestIdP</div>`, "Sign in with TestIdP", "testidp"],
    ["an icon button named by its aria-label", `${passwordForm}<button type="button" aria-label="Continue with TestIdP"><svg></svg></button>`, "Continue with TestIdP", "testidp"],
    ["an icon button named by its image's alt, outside any form", `<p>Log in</p><button><img src="/idp.png" alt="Sign in with TestIdP"></button>`, "Sign in with TestIdP", "testidp"],
    ["a span with role=link named by its title", `${passwordForm}<span role="link" title="Log in with TestIdP"><i class="icon"></i></span>`, "Log in with TestIdP", "testidp"],
    ["a German button", `${passwordForm}<button type="button">Anmelden mit TestIdP</button>`, "Anmelden mit TestIdP", "testidp"],
    ["a French button", `${passwordForm}<button type="button">Se connecter avec TestIdP</button>`, "Se connecter avec TestIdP", "testidp"],
    ["a Spanish button", `${passwordForm}<button type="button">Iniciar sesión con TestIdP</button>`, "Iniciar sesión con TestIdP", "testidp"],
  ])("%s: offered as the provider's choice, pressed in a browser", (_, main, label, provider) => {
    const { prompt, plan } = stepOf(main);

    expect(prompt.pending_sso_buttons).toEqual([expect.objectContaining({ label, provider })]);
    const choice = plan.choices.find((candidate) => candidate.type === "sso_provider");
    expect(choice).toMatchObject({ provider, label });
    // Only the page's script acts on it: no address to follow, no form to send.
    expect(choice?.url).toBeUndefined();
    expect(choice?.form).toBeUndefined();
  });

  it("an image link to a provider's sign-in page stays a link to follow, named by its image", () => {
    const { plan } = stepOf(`${passwordForm}<a href="https://app.example/auth/testidp"><img src="/idp.png" alt="Sign in with TestIdP"></a>`);
    expect(plan.choices.find((choice) => choice.type === "sso_provider")).toMatchObject({ provider: "testidp", url: "https://app.example/auth/testidp" });
  });

  it("an icon submit button of its own form, named by its aria-label, sends that form", () => {
    const { plan } = stepOf(`${passwordForm}<form method="post" action="/auth/testidp"><button aria-label="Continue with TestIdP"><svg></svg></button></form>`);
    expect(plan.choices.find((choice) => choice.type === "sso_provider")).toMatchObject({ provider: "testidp", pairs: [] });
  });

  it("a button that names no provider is no identity provider's", () => {
    const { prompt } = stepOf(`${passwordForm}<button type="button" aria-label="Show password"><svg></svg></button><a onclick="help()">Need help?</a>`);
    expect(prompt.pending_sso_buttons).toEqual([]);
  });
});
