import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { brotliCompressSync, createBrotliCompress, createDeflate, createGzip, deflateSync, gzipSync } from "node:zlib";
import { field, page, postForm } from "./site-html.ts";
import { handlerClock, randomToken, serveRoutes, type Route } from "./site-http.ts";

/** The content codings the login engine asks for (`accept-encoding`). */
export const contentCodings = ["gzip", "deflate", "br"] as const;
export type ContentCoding = (typeof contentCodings)[number];

const compressors = { gzip: createGzip, deflate: createDeflate, br: createBrotliCompress };
const compressSync = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };

export interface CompressedSite {
  url: string;
  stop(): Promise<void>;
}

/**
 * A site that answers compressed: `/<coding>/login` is an ordinary sign-in page, `/<coding>/bomb` a
 * small body that decompresses to `bombBytes` of zeros.
 */
export async function startCompressedSite(options: { bombBytes: number }): Promise<CompressedSite> {
  const loginPage = page({
    brand: "Packed",
    title: "Sign in",
    main: postForm({
      action: "/login",
      csrfToken: randomToken(),
      submit: "Sign in",
      body: [
        field({ id: "email", name: "email", label: "Email address", type: "email", autocomplete: "username" }),
        field({ id: "password", name: "password", label: "Password", type: "password", autocomplete: "current-password" }),
      ].join("\n"),
    }),
  });
  const routes = new Map<string, Route>();
  for (const coding of contentCodings) {
    const bomb = await compressedZeros(coding, options.bombBytes);
    const headers = { "content-type": "text/html; charset=utf-8", "content-encoding": coding };
    routes.set(`/${coding}/login`, { GET: () => ({ status: 200, body: compressSync[coding](loginPage), headers }) });
    routes.set(`/${coding}/bomb`, { GET: () => ({ status: 200, body: bomb, headers }) });
  }
  const server = await serveRoutes(routes, handlerClock());
  return { url: `http://127.0.0.1:${server.port}`, stop: server.stop };
}

/** Compressed as a stream, so the site itself never holds the zeros it stands for. */
function compressedZeros(coding: ContentCoding, bytes: number): Promise<Buffer> {
  function* zeros() {
    const chunk = Buffer.alloc(1024 * 1024);
    for (let left = bytes; left > 0; left -= chunk.length) yield chunk.subarray(0, Math.min(left, chunk.length));
  }
  return buffer(Readable.from(zeros()).pipe(compressors[coding]()));
}
