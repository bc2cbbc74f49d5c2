// The HTTP server with limits of our own rather than Node's defaults: a client that trickles its
// headers or body is cut off (408), idle keep-alive connections outlive a proxy's idle timeout, and
// past HTTP_MAX_CONNECTIONS new connections are refused instead of exhausting memory and sockets.
import { createServer, type RequestListener, type Server, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { Config } from "./config.js";

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
 * What Node's parser refuses before any handler runs (a request line or headers past 16 KB, bytes
 * that are no HTTP, a trickling client) is answered as every other error is: a problem document,
 * with the status Node would give (431, 408, 400), then the connection closes. Node's own answer
 * has no body, and a URL of many comma-separated names runs into the header limit first.
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === "ECONNRESET" || !socket.writable) return void socket.destroy();
  const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
  const detail = {
    431: "The request line and headers are larger than 16 KB: send long lists in a body, or in several requests.",
    408: "The request did not arrive in time.",
    400: "The request is not valid HTTP.",
  }[status];
  const body = JSON.stringify({ type: "about:blank", title: STATUS_CODES[status], status, detail });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
