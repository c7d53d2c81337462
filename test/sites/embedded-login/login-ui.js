// @ts-check
/**
 * A login UI embedded in a caller's own web app, as managed-auth-react makes its calls: from this
 * page's origin to the service's, the handoff token in `Authorization`, never a cookie. The test
 * drives it step by step through `window.embeddedLogin`.
 */

/** @param {Response} response */
async function readJson(response) {
  if (!response.ok) throw new Error(`${response.url} answered ${response.status}`);
  return response.json();
}

/** @param {string} baseUrl @param {string} id */
const connectionUrl = (baseUrl, id) => `${baseUrl}/auth/connections/${encodeURIComponent(id)}`;

/** @param {string} baseUrl @param {string} id @param {string} code @returns {Promise<string>} the token */
async function exchange(baseUrl, id, code) {
  const response = await fetch(`${connectionUrl(baseUrl, id)}/exchange`, {
    method: "POST",
    credentials: "omit",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code }),
  });
  return (await readJson(response)).jwt;
}

/** @param {string} baseUrl @param {string} id @param {string} token */
async function getConnection(baseUrl, id, token) {
  return readJson(await fetch(connectionUrl(baseUrl, id), { headers: { authorization: `Bearer ${token}` } }));
}

/** @param {string} baseUrl @param {string} id @param {string} token @param {unknown} body */
async function submit(baseUrl, id, token, body) {
  const response = await fetch(`${connectionUrl(baseUrl, id)}/submit`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return readJson(response);
}

/**
 * Reads the events stream until the state the caller waits for, the flow asking for input or its
 * end, and answers it with the `x-request-id` the page could read (an exposed header).
 * @param {string} baseUrl @param {string} id @param {string} token @param {"input" | "end"} until
 */
async function nextState(baseUrl, id, token, until) {
  const response = await fetch(`${connectionUrl(baseUrl, id)}/events`, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } });
  if (!response.ok || !response.body) throw new Error(`events answered ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the events stream ended before the flow wanted input or ended");
      buffered += value;
      const frames = buffered.split("\n\n");
      buffered = frames.pop() ?? "";
      for (const frame of frames) {
        const data = frame.split("\n").find((line) => line.startsWith("data: "));
        const event = data && JSON.parse(data.slice("data: ".length));
        if (event?.event !== "managed_auth_state") continue;
        if (event.flow_status !== "IN_PROGRESS" || (until === "input" && event.flow_step === "AWAITING_INPUT")) {
          return { state: event, requestId: response.headers.get("x-request-id") };
        }
      }
    }
  } finally {
    await reader.cancel();
  }
}

/**
 * A fetch whose failure the page can only see as a TypeError, as a refused CORS call shows.
 * @param {string} url @param {RequestInit} init
 */
async function attempt(url, init) {
  try {
    const response = await fetch(url, init);
    return { status: response.status };
  } catch (error) {
    return { failed: String(error) };
  }
}

Object.assign(window, { embeddedLogin: { exchange, getConnection, submit, nextState, attempt } });
