// The HTTP server with limits of our own rather than Node's defaults: a client that trickles its
// headers or body is cut off (408), idle keep-alive connections outlive a proxy's idle timeout, and
// past HTTP_MAX_CONNECTIONS new connections are refused instead of exhausting memory and sockets.
import { randomUUID } from "node:crypto";
import { createServer, type RequestListener, type Server, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Config } from "./config.js";
import { logger } from "./logger.js";

type Limits = Pick<Config, "HTTP_HEADERS_TIMEOUT_MS" | "HTTP_REQUEST_TIMEOUT_MS" | "HTTP_KEEP_ALIVE_TIMEOUT_MS" | "HTTP_MAX_CONNECTIONS">;

export function createHttpServer(handler: RequestListener, limits: Limits): Server {
  const server = createServer(
    {
      headersTimeout: limits.HTTP_HEADERS_TIMEOUT_MS,
      // Node requires requestTimeout ≥ headersTimeout (0 would disable it).
      requestTimeout: Math.max(limits.HTTP_REQUEST_TIMEOUT_MS, limits.HTTP_HEADERS_TIMEOUT_MS),
      keepAliveTimeout: limits.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      // The two timeouts above are enforced by a sweep at this interval (Node's default: 30 s).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.HTTP_HEADERS_TIMEOUT_MS / 4))),
    },
    handler,
  );
  server.maxConnections = limits.HTTP_MAX_CONNECTIONS;
  server.on("clientError", answerClientError);
  return server;
}

/**
 * Headers the service sets on every answer (src/app.ts), the parser's refusals below included:
 * browsers take the declared media type as it is, no page of ours is framed by another site, and no
 * URL of ours leaks to the sites a page links to.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy": "frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
};

/**
 * What Node's parser refuses before any handler runs (a request line and headers past 16 KB, bytes
 * that are no HTTP, a trickling client) is answered as every other error is: a problem document,
 * with the status Node would give (431, 408, 400), an `x-request-id` (a new one: the caller's own
 * cannot be read from headers that were not parsed) that the log line below carries too, and the
 * headers of every answer; then the connection closes. Node's own answer has neither body nor id,
 * and a URL of many comma-separated names runs into the header limit first.
 *
 * A URL past the limit is a 431 too, not a 414: Node's parser counts the request target and the
 * header lines against one limit (maxHeaderSize) and its error (HPE_HEADER_OVERFLOW) does not say
 * which overflowed; where it happened in the bytes at hand depends on how the request was split
 * into packets, so a 414 read from them would depend on the network. (A bigger maxHeaderSize with a
 * URL limit of our own would cost that much more memory per connection; docs/rest.md.)
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === "ECONNRESET" || !socket.writable) return void socket.destroy();
  const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
  const detail = {
    431: "The request line and headers are larger than 16 KB: send long lists in a body, or in several requests.",
    408: "The request did not arrive in time.",
    400: "The request is not valid HTTP.",
  }[status];
  const requestId = randomUUID();
  logger.info({ requestId, status, code: err.code, remoteAddress: (socket as Socket).remoteAddress }, `HTTP request refused by the parser: ${status}`);
  const body = JSON.stringify({ type: "about:blank", title: STATUS_CODES[status], status, detail });
  const headers = {
    "Content-Type": "application/problem+json",
    "Content-Length": String(Buffer.byteLength(body)),
    "x-request-id": requestId,
    ...SECURITY_HEADERS,
    Connection: "close",
  };
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("")}\r\n${body}`,
  );
}
