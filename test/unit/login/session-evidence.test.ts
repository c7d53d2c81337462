import { describe, expect, it } from "vitest";
import { judgeWithEvidence, learnSessionEvidence } from "#shared/login/session-evidence.ts";

/** Landing pages written after real applications' markup: what a signed-in visitor and an anonymous one get. */
const wordpressSignedIn = `<!DOCTYPE html><html lang="en-US"><head><title>Pine Blog</title></head><body class="home blog logged-in admin-bar">
<div id="wpadminbar" class="nojq"><ul id="wp-admin-bar-top-secondary" class="ab-top-secondary ab-top-menu">
<li id="wp-admin-bar-my-account" class="menupop with-avatar"><a class="ab-item" href="https://blog.example/wp-admin/profile.php">Howdy, <span class="display-name">ada</span></a>
<ul><li id="wp-admin-bar-logout"><a class="ab-item" href="https://blog.example/wp-login.php?action=logout&amp;_wpnonce=3f2a9c1d7e">Log Out</a></li></ul></li></ul></div>
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

function learn(signedIn: string, anonymous: string, url: string, identifier: string) {
  return learnSessionEvidence({
    signedIn: { url, body: signedIn, refused: false },
    anonymous: { url, body: anonymous, refused: false },
    identifiers: [identifier],
    sessionCookies: ["session"],
  });
}

describe("session evidence on real applications' pages", () => {
  it.each([
    ["WordPress with its admin bar", wordpressSignedIn, wordpressAnonymous, "https://blog.example/", "ada"],
    ["GitLab", gitlabSignedIn, gitlabAnonymous, "https://gitlab.example/dashboard/projects", "ada"],
    ["a German site", germanSignedIn, germanAnonymous, "https://verein.example/", "ada@example.com"],
  ])("%s: the signed-in page passes, the anonymous one does not", (_, signedIn, anonymous, url, identifier) => {
    const evidence = learn(signedIn, anonymous, url, identifier);

    expect(evidence.basis).toBe("verified");
    expect(evidence.signedIn.map((marker) => marker.kind)).toContain("sign_out");
    expect(judgeWithEvidence(evidence, { url, body: signedIn })).toEqual({ state: "logged_in" });
    expect(judgeWithEvidence(evidence, { url, body: anonymous })).toMatchObject({ state: "logged_out" });
  });

  it("keeps the account's name and the account link, even where a sign-in link shows on both pages", () => {
    const evidence = learn(wordpressSignedIn, wordpressAnonymous, "https://blog.example/", "ada");
    const withoutSignOut = wordpressSignedIn.replace(/<li id="wp-admin-bar-logout">.*?<\/li>/, "");

    expect(evidence.signInWhenOut).toBe(false);
    expect(evidence.signedIn.map((marker) => marker.kind)).toEqual(expect.arrayContaining(["account_name", "account_link"]));
    expect(judgeWithEvidence(evidence, { url: "https://blog.example/", body: withoutSignOut })).toEqual({ state: "logged_in" });
  });

  it("a nonce in the sign-out link or a session id in a link does not make the page look signed out", () => {
    const evidence = learn(wordpressSignedIn, wordpressAnonymous, "https://blog.example/", "ada");
    const nextVisit = wordpressSignedIn.replace("3f2a9c1d7e", "9b8c7d6e5f");

    expect(judgeWithEvidence(evidence, { url: "https://blog.example/", body: nextVisit })).toEqual({ state: "logged_in" });
  });

  it("is unverifiable when the two pages show the same", () => {
    const evidence = learn(wordpressAnonymous, wordpressAnonymous, "https://blog.example/", "ada");

    expect(evidence).toMatchObject({ basis: "unverifiable", signedIn: [] });
    expect(judgeWithEvidence(evidence, { url: "https://blog.example/", body: wordpressAnonymous })).toMatchObject({ state: "inconclusive" });
  });
});
