import { describe, expect, it } from "vitest";
import { parsePage } from "#shared/login/page.ts";
import {
  isSessionEvidence,
  judgeWithEvidence,
  learnSessionEvidence,
  sessionCookieNames,
  unverifiableReason,
} from "#shared/login/session-evidence.ts";
import type { SessionEvidence, SignedInMarker } from "#shared/login/types.ts";

/** Landing pages written after real applications' markup: what a signed-in visitor and an anonymous one get. */
const wordpressSignedIn = (nonce = "3f2a9c1d7e") => `<!DOCTYPE html><html lang="en-US"><head><title>Pine Blog</title></head><body class="home blog logged-in admin-bar">
<div id="wpadminbar" class="nojq"><ul id="wp-admin-bar-top-secondary" class="ab-top-secondary ab-top-menu">
<li id="wp-admin-bar-my-account" class="menupop with-avatar"><a class="ab-item" href="https://blog.example/wp-admin/profile.php">Howdy, <span class="display-name">ada</span></a>
<ul><li id="wp-admin-bar-logout"><a class="ab-item" href="https://blog.example/wp-login.php?action=logout&amp;_wpnonce=${nonce}">Log Out</a></li></ul></li></ul></div>
<main><h2 class="entry-title"><a href="https://blog.example/hello-world/">Hello world!</a></h2></main>
<aside><a href="https://blog.example/wp-login.php">Log in</a></aside></body></html>`;
const wordpressAnonymous = `<!DOCTYPE html><html lang="en-US"><head><title>Pine Blog</title></head><body class="home blog">
<main><h2 class="entry-title"><a href="https://blog.example/hello-world/">Hello world!</a></h2></main>
<aside><a href="https://blog.example/wp-login.php">Log in</a></aside></body></html>`;
const gitlabSignedIn = `<!DOCTYPE html><html><head><title>Projects · GitLab</title></head><body>
<nav class="super-sidebar"><div class="user-bar"><a class="gl-avatar-link" href="/ada" data-user="ada"><img alt="Ada Lovelace" src="/uploads/a.png"></a>
<div class="gl-new-dropdown"><a href="/-/user_settings/profile">Edit profile</a><a class="sign-out-link" rel="nofollow" data-method="post" href="/users/sign_out">Sign out</a></div></div></nav>
<main><h1>Projects</h1><a href="/explore">Explore projects</a></main></body></html>`;
const gitlabAnonymous = `<!DOCTYPE html><html><head><title>Projects · GitLab</title></head><body>
<nav><a href="/users/sign_in?redirect_to_referer=yes">Sign in</a> <a href="/users/sign_up">Register</a></nav>
<main><h1>Projects</h1><a href="/explore">Explore projects</a></main></body></html>`;
const germanSignedIn = `<!doctype html><html lang="de"><head><title>Startseite – Tannenverein</title></head><body>
<header><span class="benutzer">Angemeldet als <strong>ada@example.com</strong></span> <a href="/konto/abmelden">Abmelden</a></header><main><p>Willkommen</p></main></body></html>`;
const germanAnonymous = `<!doctype html><html lang="de"><head><title>Startseite – Tannenverein</title></head><body>
<header><a href="/konto/anmelden">Anmelden</a></header><main><p>Willkommen</p></main></body></html>`;

/** MediaWiki's main page; `changes` is the content of a recent-changes box, which lists whatever pages were edited. */
const mediawiki = (signedIn: boolean, changes = "") => `<!DOCTYPE html><html lang="en"><head><title>Main Page - Pinewiki</title></head>
<body class="mediawiki skin-vector"><div id="mw-head"><nav id="p-personal" class="vector-menu"><ul>
${
  signedIn
    ? `<li id="pt-userpage"><a href="/wiki/User:Ada" title="Your user page">Ada</a></li><li id="pt-preferences"><a href="/wiki/Special:Preferences">Preferences</a></li>
<li id="pt-logout"><a href="/w/index.php?title=Special:UserLogout&amp;returnto=Main+Page" title="Log out">Log out</a></li>`
    : `<li id="pt-anonuserpage">Not logged in</li><li id="pt-login"><a href="/w/index.php?title=Special:UserLogin&amp;returnto=Main+Page">Log in</a></li>`
}
</ul></nav></div><div id="content" class="mw-body"><h1 id="firstHeading">Main Page</h1><div id="mw-content-text"><p>Welcome to Pinewiki.</p>
<div class="recent-changes"><ul>${changes}</ul></div></div></div></body></html>`;
const loginPagesEdited = `<li><a href="/wiki/Login" title="Login">Login</a> (diff | hist) . . Bob</li><li><a href="/help/sign-in">Help:Sign in</a> . . Carol</li>`;

const page = (html: string, url: string) => parsePage(html, url);
const read = (html: string, url: string) => () => page(html, url);

function learn(signedIn: string | [string, string], anonymous: string, url: string, identifier: string) {
  const [first, second] = typeof signedIn === "string" ? [signedIn, signedIn] : signedIn;
  return learnSessionEvidence({
    signedIn: [page(first, url), page(second, url)],
    anonymous: { model: page(anonymous, url), refused: false },
    identifiers: [identifier],
    sessionCookies: ["session"],
  });
}

/** The evidence with only the markers of one kind, to see what each alone decides. */
function only(evidence: SessionEvidence, kind: SignedInMarker["kind"]): SessionEvidence {
  const markers = evidence.signedIn.filter((marker) => marker.kind === kind);
  expect(markers.length).toBeGreaterThan(0);
  return { ...evidence, signedIn: markers, signInPlaces: [] };
}

describe("session evidence on real applications' pages", () => {
  it.each([
    ["WordPress with its admin bar", wordpressSignedIn(), wordpressAnonymous, "https://blog.example/", "ada"],
    ["GitLab", gitlabSignedIn, gitlabAnonymous, "https://gitlab.example/dashboard/projects", "ada"],
    ["a German site", germanSignedIn, germanAnonymous, "https://verein.example/", "ada@example.com"],
    ["MediaWiki", mediawiki(true), mediawiki(false), "https://wiki.example/wiki/Main_Page", "Ada"],
  ])("%s: the signed-in page passes, the anonymous one does not", (_, signedIn, anonymous, url, identifier) => {
    const evidence = learn(signedIn, anonymous, url, identifier);

    expect(evidence.basis).toBe("verified");
    expect(evidence.signedIn.map((marker) => marker.kind)).toContain("sign_out");
    expect(judgeWithEvidence(evidence, read(signedIn, url))).toEqual({ state: "logged_in" });
    expect(judgeWithEvidence(evidence, read(anonymous, url))).toMatchObject({ state: "logged_out" });
  });

  it("keeps the account's name and the account link, even where a sign-in link shows on both pages", () => {
    const evidence = learn(wordpressSignedIn(), wordpressAnonymous, "https://blog.example/", "ada");
    const withoutSignOut = wordpressSignedIn().replace(/<li id="wp-admin-bar-logout">.*?<\/li>/, "");

    expect(evidence.signInPlaces).toEqual([]);
    expect(evidence.signedIn.map((marker) => marker.kind)).toEqual(expect.arrayContaining(["account_name", "account_link"]));
    expect(judgeWithEvidence(evidence, read(withoutSignOut, "https://blog.example/"))).toEqual({ state: "logged_in" });
  });

  it("is unverifiable when the two pages show the same, and says the page cannot tell signed-in from signed-out", () => {
    const evidence = learn(wordpressAnonymous, wordpressAnonymous, "https://blog.example/", "ada");

    expect(evidence).toMatchObject({ basis: "unverifiable", signedIn: [], signInPlaces: [] });
    expect(judgeWithEvidence(evidence, read(wordpressAnonymous, "https://blog.example/"))).toEqual({ state: "inconclusive", reason: unverifiableReason });
    expect(unverifiableReason).toContain("cannot tell signed-in from signed-out");
  });
});

describe("a sign-in link counts only where the page without the session offered one", () => {
  const url = "https://wiki.example/wiki/Main_Page";

  it("a signed-in MediaWiki page whose recent changes link to Login and Help:Sign in pages stays logged in", () => {
    const evidence = learn(mediawiki(true), mediawiki(false), url, "Ada");

    expect(judgeWithEvidence(evidence, read(mediawiki(true, loginPagesEdited), url))).toEqual({ state: "logged_in" });
  });

  it("with only the place of the sign-in offer learnt, a content link to a Login page is no offer, the personal tools' link is", () => {
    // Nothing names the account on this skin's signed-in page: the sign-in offer is all there is.
    const signedIn = mediawiki(true).replace(/<li id="pt-userpage">.*?<\/li><li id="pt-preferences">.*?<\/li>\s*<li id="pt-logout">.*?<\/li>/s, "");
    const evidence = learn(signedIn, mediawiki(false), url, "Ada");

    expect(evidence).toMatchObject({ basis: "verified", signedIn: [], signInPlaces: ["li#pt-login"] });
    expect(judgeWithEvidence(evidence, read(signedIn.replace("<ul></ul>", `<ul>${loginPagesEdited}</ul>`), url))).toEqual({ state: "logged_in" });
    expect(judgeWithEvidence(evidence, read(mediawiki(false), url))).toMatchObject({ state: "logged_out" });
  });
});

describe("only what both signed-in fetches show is evidence", () => {
  const forumUrl = "https://forum.example/";
  /** A community site's landing page: the member's own menu, and a member featured at random on each request. */
  const community = (featured: string, signedIn: boolean, unread = 3) => `<!doctype html><html><head><title>${signedIn ? `(${unread}) Home` : "Home"} | Pine Community</title></head><body>
<header class="site-header">${
    signedIn
      ? `<div class="user-menu"><a href="/members/ada/">My profile</a> <a href="/logout/?_xfToken=1732500000,${featured.length}f0e9d8c7b6a5">Log out</a></div>`
      : `<div class="guest-menu"><a href="/register/">Register</a></div>`
  }</header>
<main><section class="featured"><h2>Featured member</h2><a href="/members/${featured}/">${featured}</a></section></main></body></html>`;

  it("a link to a member featured at random is no account link", () => {
    const evidence = learn([community("bob", true), community("carol", true)], community("dave", false), forumUrl, "ada");
    const links = only(evidence, "account_link");

    expect(links.signedIn).toHaveLength(1);
    expect(judgeWithEvidence(links, read(community("erin", true), forumUrl))).toEqual({ state: "logged_in" });
    expect(judgeWithEvidence(links, read(community("bob", false), forumUrl))).toMatchObject({ state: "logged_out" });
  });

  it("a count in the title changes without the session changing", () => {
    const evidence = learn([community("bob", true, 3), community("bob", true, 4)], community("bob", false), forumUrl, "ada");

    expect(judgeWithEvidence(evidence, read(community("bob", true, 12), forumUrl))).toEqual({ state: "logged_in" });
    expect(judgeWithEvidence(evidence, read(community("bob", false), forumUrl))).toMatchObject({ state: "logged_out" });
  });

  it("a title that alone tells the pages apart is not enough evidence", () => {
    const inbox = (count: number) => `<!doctype html><html><head><title>Inbox (${count}) - Webmail</title></head><body><main><p>Messages</p></main></body></html>`;
    const evidence = learn(inbox(3), `<!doctype html><html><head><title>Webmail</title></head><body><main><p>Messages</p></main></body></html>`, "https://mail.example/", "ada");

    expect(evidence).toMatchObject({ basis: "unverifiable", signedIn: [] });
    expect(judgeWithEvidence(evidence, read(inbox(4), "https://mail.example/"))).toMatchObject({ state: "inconclusive" });
  });

  it("a logout link carrying a fresh CSRF token on every page still matches", () => {
    const evidence = learn([wordpressSignedIn("3f2a9c1d7e"), wordpressSignedIn("77aa0b1c2d")], wordpressAnonymous, "https://blog.example/", "ada");
    const signOut = only(evidence, "sign_out");

    expect(judgeWithEvidence(signOut, read(wordpressSignedIn("9b8c7d6e5f"), "https://blog.example/"))).toEqual({ state: "logged_in" });
    expect(judgeWithEvidence(signOut, read(wordpressAnonymous, "https://blog.example/"))).toMatchObject({ state: "logged_out" });
  });

  it("the account's name is found by a place that survives a deploy, not by generated class names", () => {
    const app = (build: string, signedIn: boolean) => `<!doctype html><html><head><title>Dashboard</title></head><body>
<header><div class="css-${build}a"><span class="css-${build}b">${signedIn ? "ada" : "Guest"}</span></div></header><main><p>Welcome</p></main></body></html>`;
    const evidence = learn(app("1x2y3z", true), app("1x2y3z", false), "https://app.example/", "ada");
    const name = only(evidence, "account_name");

    expect(name.signedIn).toEqual([expect.objectContaining({ where: "header" })]);
    expect(judgeWithEvidence(name, read(app("9q8w7e", true), "https://app.example/"))).toEqual({ state: "logged_in" });
    expect(judgeWithEvidence(name, read(app("9q8w7e", false), "https://app.example/"))).toMatchObject({ state: "logged_out" });
  });
});

describe("session cookies", () => {
  it("are the cookies the login added that stayed through both signed-in fetches, not a message or return address", () => {
    expect(
      sessionCookieNames({
        afterFirst: ["csrftoken", "sessionid", "welcome_tour", "messages", "return_to", "remember_user_token"],
        afterSecond: ["csrftoken", "sessionid", "messages", "return_to", "remember_user_token"],
        anonymous: ["csrftoken"],
      }),
    ).toEqual(["sessionid", "remember_user_token"]);
  });
});

describe("the account's name is read the same way when learnt, when excluded and when checked", () => {
  it("a name in an element beside its label, with no space between them, is found again on the same signed-in page", () => {
    // Minified markup: the label and the name are adjacent elements of one account box.
    const signedIn = `<!doctype html><html><head><title>Dashboard</title></head><body><header class="topbar"><div class="account"><span>Signed in as</span><strong>alice</strong></div></header><main><p>Reports</p></main></body></html>`;
    const anonymous = `<!doctype html><html><head><title>Dashboard</title></head><body><header class="topbar"><div class="account"><span>Welcome</span></div></header><main><p>Reports</p></main></body></html>`;
    const evidence = learn(signedIn, anonymous, "https://reports.example/", "alice");

    expect(evidence).toMatchObject({ basis: "verified", signedIn: [expect.objectContaining({ kind: "account_name", where: "div.account" })] });
    expect(judgeWithEvidence(evidence, read(signedIn, "https://reports.example/"))).toEqual({ state: "logged_in" });
    expect(judgeWithEvidence(evidence, read(anonymous, "https://reports.example/"))).toMatchObject({ state: "logged_out" });
  });

  it("a name a public listing shows to anyone, in a cell beside another, is no marker", () => {
    // A phpBB-like board: the member's own post is listed for everyone, minified.
    const board = (signedIn: boolean) =>
      `<!doctype html><html><head><title>Board index</title></head><body><div class="navbar">${signedIn ? `<a href="/ucp.php?mode=logout&amp;sid=4f1e">Logout</a>` : `<a href="/ucp.php?mode=login">Login</a>`}</div><table class="topics"><tr><td class="title">Hello</td><td class="author">alice</td><td>3 min ago</td></tr></table></body></html>`;
    const evidence = learn(board(true), board(false), "https://board.example/", "alice");

    expect(evidence.signedIn).toEqual([{ kind: "sign_out" }]);
    expect(judgeWithEvidence(evidence, read(board(false), "https://board.example/"))).toMatchObject({ state: "logged_out" });
  });

  it("keeps only markers that tell the pages they were learnt from apart: a link the anonymous page offers as 'Log in' is no account link", () => {
    // WooCommerce: the same account page is "My account" signed in and the sign-in page for a visitor.
    const shop = (signedIn: boolean) => `<!doctype html><html><head><title>Pine Shop</title></head><body><header id="masthead" class="site-header"><ul class="site-header-account">${
      signedIn
        ? `<li><a href="https://shop.example/my-account/">My account</a></li><li><a href="https://shop.example/my-account/customer-logout/?_wpnonce=5d1c2b3a4f">Log out</a></li>`
        : `<li><a href="https://shop.example/my-account/">Log in</a></li>`
    }</ul></header><main><p>New arrivals</p></main></body></html>`;
    const evidence = learn(shop(true), shop(false), "https://shop.example/", "ada");

    expect(evidence.signedIn).toEqual([{ kind: "sign_out" }]);
    expect(judgeWithEvidence(evidence, read(shop(true), "https://shop.example/"))).toEqual({ state: "logged_in" });
    expect(judgeWithEvidence(evidence, read(shop(false), "https://shop.example/"))).toMatchObject({ state: "logged_out" });
  });
});

describe("the title is no evidence", () => {
  it("a logged-out page whose title matches the signed-in one, since its consent cookie lifted a wall the anonymous fetch met, is logged out", () => {
    const url = "https://forum.example/";
    const forum = (title: string, signedIn: boolean) =>
      `<!doctype html><html><head><title>${title}</title></head><body><header class="site-header">${signedIn ? `<a href="/logout/">Log out</a>` : `<a href="/register/">Register</a>`}</header><main><p>Latest threads</p></main></body></html>`;
    const evidence = learn(forum("Pine Community", true), forum("Before you continue – Pine Community", false), url, "ada");

    expect(evidence.signedIn.map((marker) => marker.kind)).not.toContain("title");
    expect(judgeWithEvidence(evidence, read(forum("Pine Community", false), url))).toMatchObject({ state: "logged_out" });
  });
});

describe("nothing stored names the account in plain text", () => {
  it("a locator or cookie name that spells out the account's name is passed over for one further up, or left out", () => {
    // Nextcloud-like: the user menu's id carries the user id.
    const app = (signedIn: boolean) =>
      `<!doctype html><html><head><title>Files</title></head><body><header id="header">${signedIn ? `<div id="user-ada" class="user-ada-menu"><span>ada</span></div>` : `<div id="guest"><span>Guest</span></div>`}</header><main><p>Files</p></main></body></html>`;
    const evidence = learnSessionEvidence({
      signedIn: [page(app(true), "https://cloud.example/"), page(app(true), "https://cloud.example/")],
      anonymous: { model: page(app(false), "https://cloud.example/"), refused: false },
      identifiers: ["ada"],
      sessionCookies: ["nc_session", "nc_username_ada"],
    });

    expect(evidence.signedIn).toEqual([expect.objectContaining({ kind: "account_name", where: "header#header" })]);
    expect(evidence.sessionCookies).toEqual(["nc_session"]);
    expect(JSON.stringify(evidence).toLowerCase()).not.toContain("ada");
    expect(judgeWithEvidence(evidence, read(app(true), "https://cloud.example/"))).toEqual({ state: "logged_in" });
  });
});

describe("the evidence's shape", () => {
  it("is version 2, without the refusal it never read; a version 1 record is none, so checks fall back to the basic signs", () => {
    const evidence = learn(wordpressSignedIn(), wordpressAnonymous, "https://blog.example/", "ada");

    expect(evidence.version).toBe(2);
    expect(evidence).not.toHaveProperty("refusedWhenOut");
    expect(isSessionEvidence(evidence)).toBe(true);
    expect(isSessionEvidence({ ...evidence, version: 1, refusedWhenOut: false })).toBe(false);
  });
});
