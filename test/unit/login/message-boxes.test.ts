import { describe, expect, it } from "vitest";
import { parsePage } from "#shared/login/page.ts";
import { siteErrorOf, siteMessages, type MessageSources } from "#shared/login/site-message.ts";

const url = "https://app.example/login";
const loginForm = `<section class="card"><h1>Sign in</h1><form method="post"><input name="u"><input type="password" name="p"><button>Sign in</button></form></section>`;

function errorOf(html: string, sources: MessageSources = {}): string | null {
  return siteErrorOf(siteMessages(parsePage(html, url), [], sources));
}

describe("a message box's text, not its title or an icon's name", () => {
  it.each([
    {
      shape: "a dialog whose title bar is marked as the error",
      html: `<main>${loginForm}</main><div class="msgbox" role="dialog" aria-labelledby="t"><div class="msgbox-titlebar msgbox-error"><span class="material-icons">error</span><span id="t">Login Failed</span></div>
        <div class="msgbox-text">You entered an incorrect password</div><div><button>OK</button></div></div>`,
    },
    {
      shape: "an alert with a heading above its text",
      html: `<main><div class="alert alert-danger" role="alert"><h4 class="alert-heading">Login Failed</h4><p>You entered an incorrect password</p></div>${loginForm}</main>`,
    },
    {
      shape: "a modal with a header, a body and an OK link-button",
      html: `<main>${loginForm}</main><div class="modal show"><div class="modal-dialog"><div class="modal-content"><div class="modal-header"><h5 class="modal-title">Login Failed</h5></div>
        <div class="modal-body">You entered an incorrect password</div><div class="modal-footer"><a role="button" href="#">OK</a></div></div></div></div>`,
    },
    {
      shape: "an open <dialog> named by its heading",
      html: `<main>${loginForm}</main><dialog open aria-labelledby="d"><strong id="d">Login Failed</strong><p>You entered an incorrect password</p></dialog>`,
    },
    {
      shape: "a toast with an icon font's glyph",
      html: `<main>${loginForm}</main><div class="toast toast-error"><i class="material-icons">error</i> You entered an incorrect password</div>`,
    },
  ])("$shape", ({ html }) => {
    expect(errorOf(html)).toBe("You entered an incorrect password");
  });

  it("a box that says nothing but its title gives its title", () => {
    expect(errorOf(`<main><div class="alert alert-danger"><h4 class="alert-title">Invalid username or password.</h4></div>${loginForm}</main>`)).toBe("Invalid username or password.");
  });

  it("an icon marked as an error is not a message", () => {
    expect(errorOf(`<main><span class="material-icons text-danger">error</span>${loginForm}</main>`)).toBeNull();
    expect(errorOf(`<main><i class="fa fa-warning error-icon">warning</i>${loginForm}</main>`)).toBeNull();
  });
});

describe("text the page's script drew, in a page a browser rendered", () => {
  const served = `<main><p id="banner"></p><div class="columns"><section><p>Your projects, in one place.</p></section>${loginForm}</div></main>`;
  const rendered = (banner: string) => served.replace(`<p id="banner"></p>`, `<p id="banner">${banner}</p>`);

  it("a rejection far from the form that the served page did not hold is the site's message", () => {
    expect(errorOf(rendered("You entered an incorrect password"), { servedHtml: served })).toBe("You entered an incorrect password");
  });

  it("is not taken without the served page (the HTTP engine's reading), nor when the site served it", () => {
    expect(errorOf(rendered("You entered an incorrect password"))).toBeNull();
    expect(errorOf(rendered("You entered an incorrect password"), { servedHtml: rendered("You entered an incorrect password") })).toBeNull();
  });

  it("must speak of the login, read as a rejection, and stand on a page that still asks to log in", () => {
    expect(errorOf(rendered("3 exports failed overnight"), { servedHtml: served })).toBeNull();
    expect(errorOf(rendered("Your password was changed"), { servedHtml: served })).toBeNull();
    const noForm = `<main><p id="banner"></p><h1>Projects</h1></main>`;
    expect(errorOf(noForm.replace(`<p id="banner"></p>`, `<p id="banner">Your last login failed</p>`), { servedHtml: noForm })).toBeNull();
  });
});
