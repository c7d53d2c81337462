// @ts-check
/**
 * The hosted login page's script: trades the link's one-time code for the connection's handoff
 * token, follows the flow (events stream, polling as fallback) and shows each step as a form whose
 * answers go to the submit route. It navigates only to the redirects the server validated into the
 * page data, never to anything read from the address.
 */

/** @typedef {import("../strings.ts").Strings} Strings */
/** @typedef {{ success: string | null, successRefused: string | null, error: string | null, errorRefused: string | null }} Redirects */
/** @typedef {Record<string, any>} Connection */

const pageData = JSON.parse(document.getElementById("page-data")?.textContent || "{}");
/** @type {Strings} */
const strings = pageData.strings;
/** @type {Redirects} */
const redirects = { success: null, successRefused: null, error: null, errorRefused: null, ...pageData.redirect };

const connectionId = decodeURIComponent(location.pathname.split("/").pop() ?? "");
const apiBase = new URL(`../auth/connections/${encodeURIComponent(connectionId)}/`, location.href);
const tokenKey = `hosted-login-token:${connectionId}`;
const pollMilliseconds = 1000;

const heading = /** @type {HTMLElement} */ (document.getElementById("heading"));
const statusLine = /** @type {HTMLElement} */ (document.getElementById("status"));
const stepArea = /** @type {HTMLElement} */ (document.getElementById("step"));

/** @type {Connection} */
let connection = {};
/** What is on screen, so a repeated state (a poll, a heartbeat) does not wipe what the user typed. */
let shownKey = "";
let finished = false;

/** `template` with each `{name}` replaced by `values[name]`. */
function fill(template, values = {}) {
  return template.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

/**
 * An element with children; `attributes` set as attributes, except `text` (its text) and
 * `on*` (listeners).
 * @param {string} tag
 * @param {Record<string, any>} [attributes]
 * @param {(Node | string | null | undefined)[]} [children]
 */
function h(tag, attributes = {}, children = []) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") element.textContent = String(value);
    else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) element.append(child);
  return element;
}

function domain() {
  return connection.domain ?? "";
}

function setStatus(text, busy = false) {
  statusLine.textContent = text;
  statusLine.classList.toggle("busy", busy);
}

/** Replaces the step area and moves focus where a keyboard or screen-reader user needs it next. */
function show(title, nodes, focusTarget) {
  heading.textContent = title;
  document.title = title;
  stepArea.replaceChildren(...nodes.filter((node) => node !== null));
  (focusTarget ?? heading).focus();
}

/** The token kept in this tab for this connection, while it has not expired. */
function storedToken() {
  try {
    const kept = JSON.parse(sessionStorage.getItem(tokenKey) ?? "null");
    if (kept && typeof kept.jwt === "string" && kept.expires * 1000 > Date.now()) return kept.jwt;
  } catch {
    // An unreadable entry counts as none.
  }
  sessionStorage.removeItem(tokenKey);
  return null;
}

/** Seconds since the epoch at which the token expires (its `exp` claim). */
function expiryOf(jwt) {
  const payload = jwt.split(".")[1] ?? "";
  const json = atob(payload.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(payload.length / 4) * 4, "="));
  return Number(JSON.parse(json).exp);
}

/** Takes the code out of the address, keeping the caller's other parameters. */
function dropCodeFromAddress() {
  const parameters = new URLSearchParams(location.search);
  parameters.delete("code");
  const query = parameters.toString();
  history.replaceState(history.state, "", `${location.pathname}${query ? `?${query}` : ""}${location.hash}`);
}

/**
 * The token: one bought with the link's code (a new link wins over a token kept from an older one),
 * else the tab's own; null when the link can't be used. Throws when the service could not answer
 * (no network, 408, 429, 5xx): the code then stays in the address, so a reload tries it again.
 */
async function obtainToken() {
  const code = new URLSearchParams(location.search).get("code");
  if (code === null) return storedToken();
  const response = await fetch(new URL("exchange", apiBase), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code }),
  });
  if (response.status === 408 || response.status === 429 || response.status >= 500) throw new Error(`exchange answered ${response.status}`);
  if (!response.ok) {
    // Refused for good (used, expired, another connection's): trying it again cannot help.
    dropCodeFromAddress();
    return storedToken();
  }
  const { jwt } = await response.json();
  sessionStorage.setItem(tokenKey, JSON.stringify({ jwt, expires: expiryOf(jwt) }));
  // Spent: a reload must not show (or try) it again, and goes on with the kept token.
  dropCodeFromAddress();
  return jwt;
}

/** @param {string} token */
async function readConnection(token) {
  const response = await fetch(apiBase.href.replace(/\/$/, ""), { headers: { authorization: `Bearer ${token}` } });
  if (response.status === 401 || response.status === 404) return null;
  if (!response.ok) throw new Error(`reading the connection answered ${response.status}`);
  return response.json();
}

/**
 * Reads the events stream until it ends; each state frame is rendered. Resolves when the stream
 * ends or breaks, so the caller can fall back to polling while the flow is live.
 * @param {string} token
 */
async function followEvents(token) {
  const response = await fetch(new URL("events", apiBase), { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } });
  if (!response.ok || !response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += value;
    let end;
    while ((end = buffered.indexOf("\n\n")) >= 0) {
      const frame = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = frame
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trim())
        .join("\n");
      if (!data) continue;
      const payload = JSON.parse(data);
      if (payload.event === "managed_auth_state") render({ ...connection, ...payload });
    }
  }
}

async function pollUntilDone(token) {
  while (!finished) {
    await new Promise((resolve) => setTimeout(resolve, pollMilliseconds));
    try {
      const current = await readConnection(token);
      if (current === null) return showLinkUnusable();
      render(current);
    } catch {
      setStatus(strings.reconnecting, true);
    }
  }
}

async function start() {
  setStatus(strings.opening, true);
  heading.textContent = strings.headingNoDomain;
  let token;
  try {
    token = await obtainToken();
    const first = token && (await readConnection(token));
    if (!first) {
      sessionStorage.removeItem(tokenKey);
      return showLinkUnusable();
    }
    render(first);
  } catch {
    return showUnreachable();
  }
  if (finished) return;
  try {
    await followEvents(token);
  } catch {
    // A broken stream: polling takes over below.
  }
  if (!finished) await pollUntilDone(token);
}

/** @param {Connection} next */
function render(next) {
  connection = next;
  if (finished) return;
  const key = JSON.stringify([
    next.flow_status, next.flow_step, next.fields, next.choices, next.mfa_options, next.sign_in_options,
    next.pending_sso_buttons, next.external_action_message, next.website_error, next.error_code,
  ]);
  if (key === shownKey) return;
  shownKey = key;

  switch (next.flow_status) {
    case "SUCCESS":
      return finish(strings.successHeading, fill(strings.successBody, { domain: domain() }), redirects.success, redirects.successRefused, {
        profile_name: next.profile_name,
        domain: next.domain,
      });
    case "FAILED": {
      const reason = strings.errorReasons[next.error_code] ?? strings.unknownReason;
      return finish(strings.failedHeading, `${reason} ${strings.failedNext}`, redirects.error, redirects.errorRefused, {
        code: next.error_code ?? "internal_error",
        message: next.error_message ?? reason,
      });
    }
    case "EXPIRED":
      return finish(strings.expiredHeading, strings.expiredBody, redirects.error, redirects.errorRefused, { code: "expired", message: next.error_message ?? strings.expiredHeading });
    case "CANCELED":
      return finish(strings.canceledHeading, strings.canceledBody, redirects.error, redirects.errorRefused, { code: "canceled", message: next.error_message ?? strings.canceledHeading });
  }
  if (next.flow_step === "AWAITING_INPUT" && hasPrompt(next)) return showStep(next);
  if (next.flow_step === "AWAITING_EXTERNAL_ACTION" || (next.flow_step === "AWAITING_INPUT" && next.external_action_message)) return showExternalAction(next);
  showProgress(next.flow_step === "DISCOVERING" || next.flow_step === null ? fill(strings.discovering, { domain: domain() }) : strings.working);
}

function hasPrompt(state) {
  return [state.fields, state.choices, state.mfa_options, state.sign_in_options, state.pending_sso_buttons].some((list) => Array.isArray(list) && list.length > 0);
}

function showProgress(text) {
  setStatus(text, true);
  if (stepArea.querySelector("form")) return lockForms();
  heading.textContent = fill(strings.heading, { domain: domain() });
  document.title = heading.textContent;
  stepArea.replaceChildren();
}

function lockForms() {
  for (const fieldset of stepArea.querySelectorAll("fieldset")) fieldset.disabled = true;
  for (const button of stepArea.querySelectorAll("button")) button.disabled = true;
}

function siteError(state) {
  if (!state.website_error) return null;
  return h("div", { id: "site-error", class: "site-error", role: "alert", tabindex: "-1" }, [
    h("p", { class: "site-error-intro", text: fill(strings.websiteErrorIntro, { domain: domain() }) }),
    h("p", { text: state.website_error }),
  ]);
}

/** The input's type and autofill hints for a canonical field, refined by what the site's input was. */
function inputKind(field, discovered) {
  switch (field.type) {
    case "identifier":
      return { type: discovered?.type === "email" ? "email" : "text", autocomplete: "username", autocapitalize: "none", spellcheck: "false" };
    case "password":
      return { type: "password", autocomplete: "current-password" };
    case "code":
    case "totp_code":
      return { type: "text", inputmode: "numeric", autocomplete: "one-time-code", autocapitalize: "none", spellcheck: "false" };
    case "totp_secret":
      return { type: "text", autocomplete: "off", autocapitalize: "none", spellcheck: "false" };
    default:
      return { type: discovered?.type === "tel" || discovered?.type === "url" || discovered?.type === "email" ? discovered.type : "text" };
  }
}

function fieldHint(field) {
  if (field.type === "totp_code") return fill(strings.totpHint, { domain: domain() });
  if (field.type === "code") return strings.codeHint;
  return null;
}

/** One step: the site's error, the fields form or the pickers, and the SSO buttons. */
function showStep(state) {
  setStatus("");
  const error = siteError(state);
  const fields = state.fields ?? [];
  const nodes = [error];
  let firstControl = null;
  if (fields.length > 0) {
    const form = fieldsForm(state, fields, error);
    nodes.push(form);
    firstControl = form.querySelector("input");
  } else {
    const options = pickerOptions(state);
    if (options.length > 0) {
      const form = pickerForm(options);
      nodes.push(form);
      firstControl = form.querySelector("button");
    }
  }
  const sso = ssoButtons(state);
  if (sso) {
    nodes.push(sso);
    firstControl ??= sso.querySelector("button");
  }
  show(fill(strings.heading, { domain: domain() }), nodes, error ?? firstControl);
}

function fieldsForm(state, fields, error) {
  const discovered = state.discovered_fields ?? [];
  const rows = fields.map((field, index) => {
    const inputId = `field-${index}`;
    const hint = fieldHint(field);
    const hintId = hint ? `${inputId}-hint` : null;
    const described = [hintId, index === 0 && error ? error.id : null].filter(Boolean).join(" ");
    const kind = inputKind(field, discovered.find((candidate) => candidate.selector === field.observed_selector));
    return h("div", { class: "field" }, [
      h("label", { for: inputId, text: field.label || strings.fieldLabels[field.type] || strings.fieldLabels.text }),
      hint ? h("p", { id: hintId, class: "hint", text: hint }) : null,
      h("input", { id: inputId, name: field.id, required: field.required !== false, "aria-describedby": described || null, ...kind }),
    ]);
  });
  return h("form", { onsubmit: (event) => submitFields(event, fields) }, [
    h("fieldset", {}, [h("legend", { class: "visually-hidden", text: strings.fieldsLegend }), ...rows]),
    h("button", { type: "submit", class: "primary", text: strings.submit }),
  ]);
}

/**
 * What the user may pick at this step, each with the submit body that picks it. Methods come from
 * `mfa_options` and sign-in ways from `sign_in_options`; the other `choices` (accounts, ...) are
 * picked by id, and SSO providers are shown as their own buttons.
 */
function pickerOptions(state) {
  const choices = state.choices ?? [];
  // `mfa_option_id` names a method by its type: two of one type (two phones) are picked as choices.
  const offeredMfa = state.mfa_options ?? [];
  const mfaOptions = new Set(offeredMfa.map((option) => option.type)).size === offeredMfa.length ? offeredMfa : [];
  const signInOptions = state.sign_in_options ?? [];
  const ssoButtonsShown = (state.pending_sso_buttons ?? []).length > 0;
  const signInIds = new Set(signInOptions.map((option) => option.id));
  const options = [
    ...mfaOptions.map((option) => ({
      label: option.label || strings.mfaTypes[option.type] || option.type,
      description: option.description ?? option.target ?? null,
      kind: "mfa",
      body: { mfa_option_id: option.type },
    })),
    ...signInOptions.map((option) => ({
      label: option.label,
      description: option.description ?? null,
      kind: choices.find((choice) => choice.id === option.id)?.type ?? "sign_in",
      body: { sign_in_option_id: option.id },
    })),
    ...choices
      .filter((choice) => !(choice.type === "mfa_method" && mfaOptions.length > 0))
      .filter((choice) => !(choice.type === "sso_provider" && ssoButtonsShown))
      .filter((choice) => !signInIds.has(choice.id))
      .map((choice) => ({ label: choice.label, description: choice.description ?? null, kind: choice.type, body: { selected_choice_id: choice.id } })),
  ];
  return options;
}

function pickerLegend(options) {
  const kinds = new Set(options.map((option) => option.kind));
  if (kinds.size !== 1) return strings.pickerLegend;
  const [kind] = kinds;
  if (kind === "mfa" || kind === "mfa_method") return strings.mfaLegend;
  if (kind === "account") return strings.accountLegend;
  if (kind === "sign_in" || kind === "sign_in_method") return strings.signInLegend;
  return strings.pickerLegend;
}

function pickerForm(options) {
  const buttons = options.map((option, index) =>
    h("li", {}, [
      h("button", { type: "submit", class: "option", value: String(index) }, [
        h("span", { class: "option-label", text: option.label }),
        option.description && !option.label.includes(option.description) ? h("span", { class: "option-description", text: option.description }) : null,
      ]),
    ]),
  );
  return h("form", { onsubmit: (event) => submitPick(event, options) }, [
    h("fieldset", {}, [h("legend", { text: pickerLegend(options) }), h("ul", { class: "options" }, buttons)]),
  ]);
}

function ssoButtons(state) {
  const buttons = state.pending_sso_buttons ?? [];
  if (buttons.length === 0) return null;
  return h("div", { class: "sso", role: "group", "aria-labelledby": "sso-legend" }, [
    h("p", { id: "sso-legend", class: "sso-legend", text: strings.ssoLegend }),
    ...buttons.map((button) =>
      h("button", {
        type: "button",
        class: "option",
        // The site's own wording ("Sign in with Okta") already names the way; a bare provider gets ours.
        text: button.label || fill(strings.ssoButton, { provider: button.provider }),
        onclick: () => submit({ sso_button_selector: button.selector }),
      }),
    ),
  ]);
}

function showExternalAction(state) {
  setStatus(strings.working, true);
  show(strings.externalActionHeading, [h("p", { class: "notice", text: state.external_action_message || strings.externalActionDefault })]);
}

function submitFields(event, fields) {
  event.preventDefault();
  const form = /** @type {HTMLFormElement} */ (event.currentTarget);
  const data = new FormData(form);
  const values = Object.fromEntries(fields.map((field) => [field.id, String(data.get(field.id) ?? "")]).filter(([, value]) => value !== ""));
  submit({ fields: values });
}

function submitPick(event, options) {
  event.preventDefault();
  const chosen = options[Number(/** @type {HTMLButtonElement | null} */ (event.submitter)?.value ?? 0)];
  if (chosen) submit(chosen.body);
}

async function submit(body) {
  const token = storedToken();
  if (!token) return showLinkUnusable();
  lockForms();
  setStatus(strings.working, true);
  const response = await fetch(new URL("submit", apiBase), {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  }).catch(() => null);
  if (response?.status === 401) return showLinkUnusable();
  // Once accepted, the next state comes from the stream; until then the step shows its progress.
  if (!response?.ok) showSubmitFailed();
}

/** The step again, with its values kept, and an alert saying the answer did not go through. */
function showSubmitFailed() {
  setStatus("");
  for (const element of stepArea.querySelectorAll("fieldset, button")) /** @type {HTMLButtonElement} */ (element).disabled = false;
  stepArea.querySelector("#submit-error")?.remove();
  const alert = h("p", { id: "submit-error", class: "site-error", role: "alert", tabindex: "-1", text: strings.submitFailed });
  stepArea.prepend(alert);
  alert.focus();
}

/**
 * An end state; then the validated redirect of this end, if any, with `parameters` added to its
 * query. When the server refused this end's redirect (`refused`), the page says why and stays.
 */
function finish(title, body, target, refused, parameters) {
  finished = true;
  setStatus("");
  const nodes = [h("p", { class: "notice", text: body })];
  if (refused) {
    const reason = strings.redirectRefusedReasons[refused] ?? refused;
    nodes.push(h("p", { class: "site-error", role: "alert", text: fill(strings.redirectRefused, { reason }) }));
  }
  show(title, nodes);
  if (!target) return;
  const url = new URL(target);
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
  setStatus(strings.redirecting, true);
  location.assign(url.href);
}

/** The service did not answer; the link was not spent, so trying again (a reload) may work. */
function showUnreachable() {
  finished = true;
  setStatus("");
  show(strings.unreachableHeading, [
    h("p", { class: "notice", text: strings.unreachableBody }),
    h("button", { type: "button", class: "primary", text: strings.tryAgain, onclick: () => location.reload() }),
  ]);
}

function showLinkUnusable() {
  finished = true;
  setStatus("");
  show(strings.linkHeading, [h("p", { class: "notice", text: strings.linkBody })]);
}

start();
