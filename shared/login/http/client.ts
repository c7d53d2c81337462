import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import { connect as netConnect, isIP } from "node:net";
import type { Duplex } from "node:stream";
import { connect as tlsConnect } from "node:tls";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import type { CookieJar } from "tough-cookie";
import type { Deadline } from "../../deadline.ts";
import { vetHost, type Resolver } from "../../policy/addresses.ts";
import { RefusedRequestError, UnreachableError } from "../kernel.ts";
import { credentialHostRefusal, hostOf, scopeRefusal } from "../../policy/scope.ts";
import { systemResolver } from "../../policy/system-resolver.ts";
import type { LoginTarget } from "../types.ts";

/** Where a vetted connection goes: the address the guard checked, never the name again. */
export interface Endpoint {
  host: string;
  address: string;
  port: number;
  secure: boolean;
}

export interface NetworkOptions {
  /** Local mode: loopback and private networks are fair targets (test sites on 127.0.0.1). */
  allowPrivateTargets: boolean;
  /** Defaults to the system resolver. */
  resolver?: Resolver;
  /** Called with the vetted address right before a socket to it is opened. */
  onConnect?: (address: string) => void;
  /**
   * Opens the socket to a vetted endpoint; defaults to TCP (TLS for https) to `endpoint.address`.
   * It is the wire, not a policy: it only ever sees addresses the guard accepted, so a test can
   * stand a loopback server in for "the internet" without weakening the guard it exercises.
   */
  openSocket?: (endpoint: Endpoint) => Duplex;
  timeoutMs?: number;
}

export interface Page {
  url: string;
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Every URL requested, the final one included. */
  visited: string[];
}

export interface PageRequest {
  method?: "GET" | "POST";
  body?: string;
  contentType?: string;
  /** The page the request comes from, sent as Referer and (for a POST) Origin, as a browser does. */
  referer?: string;
  /** The request carries a credential stored for this domain: it goes to no host outside it, a redirect that repeats it included. */
  credentialDomain?: string;
  /**
   * An `Authorization` header (an answered Basic challenge), sent to the first URL's origin only: a
   * redirect to another origin goes without it, as a browser's does.
   */
  authorization?: string;
  /** The step's deadline: the request, its redirects and its body included, is given up then. */
  deadline?: Deadline;
}

export interface WebClient {
  /** Requests `url` with the jar's cookies, stores the answers' cookies, follows redirects; each hop is checked. */
  fetchPage(jar: CookieJar, target: LoginTarget, url: string, request?: PageRequest): Promise<Page>;
}

const maxRedirects = 10;
const maxBodyBytes = 4 * 1024 * 1024;
// A few KiB of gzip or brotli can expand to gigabytes: the decoder stops here, before a Lambda runs out of memory.
const maxDecodedBodyBytes = 10 * 1024 * 1024;
// The Chromium the service ships: some sites answer unknown clients with a bot wall.
const userAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/147.0.0.0 Safari/537.36";

function defaultOpenSocket(endpoint: Endpoint): Duplex {
  if (!endpoint.secure) return netConnect({ host: endpoint.address, port: endpoint.port });
  // SNI and certificate checks use the name, the connection the vetted address.
  return tlsConnect({
    host: endpoint.address,
    port: endpoint.port,
    servername: isIP(endpoint.host) === 0 ? endpoint.host : undefined,
    ALPNProtocols: ["http/1.1"],
  });
}

export function createWebClient(options: NetworkOptions): WebClient {
  const resolver = options.resolver ?? systemResolver;
  const openSocket = options.openSocket ?? defaultOpenSocket;
  const timeoutMs = options.timeoutMs ?? 15_000;

  /** Resolves the host once and vets every answer; the connection then goes to the vetted address only. */
  async function vet(url: URL): Promise<Endpoint> {
    const host = hostOf(url);
    const secure = url.protocol === "https:";
    const port = url.port ? Number(url.port) : secure ? 443 : 80;
    const verdict = await vetHost(host, options, resolver);
    if (verdict.outcome === "unresolved") throw new UnreachableError(verdict.reason);
    if (verdict.outcome === "refused") throw new RefusedRequestError("forbidden_address", `refused to connect to ${verdict.reason}`);
    return { host, address: verdict.addresses[0]!, port, secure };
  }

  function send(url: URL, endpoint: Endpoint, headers: Record<string, string>, method: string, body: string | undefined, signal: AbortSignal | undefined) {
    return new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = httpRequest({
        host: endpoint.host,
        port: endpoint.port,
        method,
        path: `${url.pathname}${url.search}`,
        // As a browser writes it (no default port): Node would write "host:443" for TLS over http.request.
        setHost: false,
        headers: { host: url.host, ...headers },
        signal,
        createConnection: () => {
          options.onConnect?.(endpoint.address);
          return openSocket(endpoint);
        },
      });
      outgoing.on("response", resolve);
      // Not the `timeout` option: with a socket of our own (`createConnection`) Node never arms it.
      outgoing.setTimeout(timeoutMs, () => outgoing.destroy(new UnreachableError(`${endpoint.host} did not answer within ${timeoutMs} ms`)));
      outgoing.on("error", (error) =>
        reject(error instanceof UnreachableError ? error : new UnreachableError(`could not reach ${endpoint.host}: ${errorCode(error)}`, { cause: error })),
      );
      outgoing.end(body);
    });
  }

  async function followRedirects(jar: CookieJar, target: LoginTarget, start: string, request: PageRequest): Promise<Page> {
    let url = new URL(start);
    let method = request.method ?? "GET";
    let body = request.body;
    let referer = request.referer;
    const visited: string[] = [];
    // The first request carries the values (in its body or, for a GET form, its query); a 307 or 308 repeats that body.
    let carriedCredential = request.credentialDomain;
    const authorizedOrigin = request.authorization === undefined ? null : url.origin;
    for (let hop = 0; ; hop++) {
      if (hop > maxRedirects) throw new UnreachableError(`${hostOf(url)} redirected more than ${maxRedirects} times`);
      const refusal = scopeRefusal(url, target, options);
      if (refusal) throw new RefusedRequestError("out_of_scope", `refused to follow a link: ${refusal}`);
      const credentialRefusal = carriedCredential === undefined ? null : credentialHostRefusal(carriedCredential, url);
      if (credentialRefusal) throw new RefusedRequestError("credential_domain", credentialRefusal);
      const endpoint = await vet(url);
      visited.push(url.href);
      const headers: Record<string, string> = {
        "user-agent": userAgent,
        accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        "accept-language": "en-US,en;q=0.9",
        "accept-encoding": "gzip, deflate, br",
      };
      const cookie = jar.getCookieStringSync(url.href);
      if (cookie) headers.cookie = cookie;
      if (referer) headers.referer = referer;
      if (url.origin === authorizedOrigin) headers.authorization = request.authorization!;
      if (method === "POST") {
        if (referer) headers.origin = new URL(referer).origin;
        headers["content-type"] = request.contentType ?? "application/x-www-form-urlencoded";
        headers["content-length"] = String(Buffer.byteLength(body ?? ""));
      }
      const response = await send(url, endpoint, headers, method, method === "POST" ? (body ?? "") : undefined, request.deadline?.signal);
      for (const setCookie of response.headers["set-cookie"] ?? []) {
        jar.setCookieSync(setCookie, url.href, { ignoreError: true });
      }
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (status >= 300 && status < 400 && location) {
        response.resume();
        const next = new URL(location, url);
        // 307/308 repeat the request as it was; the others turn a POST into a GET, as browsers do.
        const repeated = status === 307 || status === 308;
        if (!repeated || method !== "POST") carriedCredential = undefined;
        if (!repeated) {
          method = "GET";
          body = undefined;
        }
        referer = url.href;
        url = next;
        continue;
      }
      const text = await readBody(response, hostOf(url));
      return { url: url.href, status, headers: response.headers, body: text, visited };
    }
  }

  async function fetchPage(jar: CookieJar, target: LoginTarget, start: string, request: PageRequest = {}): Promise<Page> {
    try {
      return await followRedirects(jar, target, start, request);
    } catch (error) {
      // Cut by the deadline, a socket or a body tells only that it was cut: the deadline is why.
      if (request.deadline?.signal.aborted && !(error instanceof RefusedRequestError)) {
        throw new UnreachableError(`${hostOf(new URL(start))} did not answer before the step's deadline`, { cause: error });
      }
      throw error;
    }
  }

  return { fetchPage };
}

async function readBody(response: IncomingMessage, host: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBodyBytes) {
        response.destroy();
        throw new UnreachableError(`${host} sent a page bigger than ${maxBodyBytes} bytes`);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof UnreachableError) throw error;
    throw new UnreachableError(`${host} broke off its answer: ${errorCode(error)}`, { cause: error });
  }
  let raw = Buffer.concat(chunks);
  const limit = { maxOutputLength: maxDecodedBodyBytes };
  try {
    const encoding = (response.headers["content-encoding"] ?? "").trim().toLowerCase();
    if (encoding === "gzip" || encoding === "x-gzip") raw = gunzipSync(raw, limit);
    else if (encoding === "deflate") raw = inflateSync(raw, limit);
    else if (encoding === "br") raw = brotliDecompressSync(raw, limit);
  } catch (error) {
    if (errorCode(error) === "ERR_BUFFER_TOO_LARGE") {
      throw new UnreachableError(`${host} sent a page bigger than ${maxDecodedBodyBytes} bytes once decompressed`, { cause: error });
    }
    throw new UnreachableError(`${host} sent a body that does not decompress`, { cause: error });
  }
  return decodeText(raw, response.headers["content-type"]);
}

function decodeText(bytes: Buffer, contentType: string | undefined): string {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType ?? "")?.[1] ?? "utf-8";
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}

function errorCode(error: unknown): string {
  if (error && typeof error === "object" && "code" in error && typeof error.code === "string") return error.code;
  return error instanceof Error ? error.message : String(error);
}
