// The HTTP server with limits of our own rather than Node's defaults: a client that trickles its
// headers or body is cut off (408), idle keep-alive connections outlive a proxy's idle timeout, and
// past HTTP_MAX_CONNECTIONS new connections are refused instead of exhausting memory and sockets.
import { createServer, type RequestListener, type Server } from "node:http";
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
  return server;
}
