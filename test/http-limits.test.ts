// The HTTP server's own limits (src/httpServer.ts), over raw sockets: slow headers are cut with a
// 408, idle keep-alive connections live as long as configured and then close, and connections past
// the maximum are refused. Small values keep the test fast; production defaults are in the README.

import type { AddressInfo } from "node:net";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createHttpServer } from "../src/httpServer.js";

const server = createHttpServer((_req, res) => void res.end("ok"), {
  HTTP_HEADERS_TIMEOUT_MS: 400,
  HTTP_REQUEST_TIMEOUT_MS: 800,
  HTTP_KEEP_ALIVE_TIMEOUT_MS: 1_200,
  HTTP_MAX_CONNECTIONS: 3,
});
let port = 0;
const open: Socket[] = [];
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const s of open) s.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** A raw connection that records what it receives and when it closes. */
function raw(): Promise<{ socket: Socket; received: () => string; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    open.push(socket);
    let data = "";
    const t0 = Date.now();
    socket.on("data", (c) => void (data += c.toString()));
    const closed = new Promise<number>((r) => socket.once("close", () => r(Date.now() - t0)));
    socket.once("error", () => {});
    socket.once("connect", () => resolve({ socket, received: () => data, closed }));
    socket.once("error", reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("HTTP server limits", () => {
  it("cuts a client that trickles its headers with 408 after the headers timeout", async () => {
    const c = await raw();
    c.socket.write("GET / HTTP/1.1\r\nHost: x\r\n");
    const took = await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 408/);
    expect(c.received()).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/);
    expect(JSON.parse(c.received().split("\r\n\r\n")[1]!)).toMatchObject({ status: 408, title: "Request Timeout" });
    expect(took).toBeGreaterThanOrEqual(350);
    expect(took).toBeLessThan(5_000);
  });

  it("answers what Node's parser refuses as a problem document: 431 past 16 KB of request line and headers, 400 for bytes that are no HTTP", async () => {
    const long = await raw();
    long.socket.write(`GET /${"a,".repeat(10_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await long.closed;
    const [head, body] = long.received().split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(head).toMatch(/\r\nContent-Type: application\/problem\+json\r\n/);
    expect(JSON.parse(body!)).toMatchObject({ type: "about:blank", title: "Request Header Fields Too Large", status: 431 });
    const junk = await raw();
    junk.socket.write("NOT HTTP AT ALL\r\n\r\n");
    await junk.closed;
    expect(junk.received()).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(junk.received().split("\r\n\r\n")[1]!)).toMatchObject({ status: 400, title: "Bad Request" });
  });

  /** The head of a raw answer as header name (lower-cased) → value, and its JSON body. */
  const parsed = (text: string) => {
    const [head, body] = text.split("\r\n\r\n");
    const [statusLine, ...lines] = head!.split("\r\n");
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
    return { statusLine, headers, body: JSON.parse(body!) };
  };

  it("a B21 URL of 10,001 pairs, and headers past 16 KB: 431 problem+json with an x-request-id (a new one each time) and the headers of every answer", async () => {
    const pairs = Array.from({ length: 10_001 }, (_, i) => `company__svc__acme${i}`).join(",");
    const answers = [];
    for (const request of [
      `DELETE /v1/accounts/acme/integrationAttributes/${pairs} HTTP/1.1\r\nHost: x\r\nx-request-id: mine-1\r\n\r\n`,
      `GET / HTTP/1.1\r\nHost: x\r\nx-request-id: mine-2\r\nX-Big: ${"b".repeat(20_000)}\r\n\r\n`,
    ]) {
      const c = await raw();
      c.socket.write(request);
      await c.closed;
      const a = parsed(c.received());
      expect(a.statusLine).toBe("HTTP/1.1 431 Request Header Fields Too Large");
      expect(a.headers["content-type"]).toBe("application/problem+json");
      expect(a.headers["x-request-id"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(a.headers).toMatchObject({
        "x-content-type-options": "nosniff",
        "x-frame-options": "DENY",
        "content-security-policy": "frame-ancestors 'none'",
        "referrer-policy": "no-referrer",
        connection: "close",
      });
      expect(a.body).toEqual({
        type: "about:blank",
        title: "Request Header Fields Too Large",
        status: 431,
        detail: "The request line and headers are larger than 16 KB: send long lists in a body, or in several requests.",
      });
      answers.push(a.headers["x-request-id"]);
    }
    expect(new Set(answers).size).toBe(2);
  });

  it("keeps an idle keep-alive connection for the keep-alive timeout, announces it, then closes it", async () => {
    const c = await raw();
    c.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await sleep(100);
    expect(c.received()).toMatch(/^HTTP\/1\.1 200/);
    expect(c.received()).toMatch(/Keep-Alive: timeout=1/i);
    await sleep(700); // idle, but within the keep-alive timeout: still usable
    c.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await sleep(100);
    expect(c.received().match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    const idleFor = await c.closed;
    expect(idleFor).toBeGreaterThan(1_500);
  });

  it("refuses connections past the maximum", async () => {
    const held = await Promise.all([raw(), raw(), raw()]);
    await sleep(100);
    const extra = await raw();
    const closedAfter = await extra.closed;
    expect(closedAfter).toBeLessThan(1_000);
    expect(extra.received()).toBe("");
    for (const h of held) h.socket.destroy();
  });

  it("defaults: 20 s headers, 120 s request, 65 s keep-alive (above a proxy's 60 s), 1,000 connections", () => {
    const c = loadConfig({});
    expect([c.HTTP_HEADERS_TIMEOUT_MS, c.HTTP_REQUEST_TIMEOUT_MS, c.HTTP_KEEP_ALIVE_TIMEOUT_MS, c.HTTP_MAX_CONNECTIONS]).toEqual([
      20_000, 120_000, 65_000, 1_000,
    ]);
    expect(() => loadConfig({ HTTP_MAX_CONNECTIONS: "0" })).toThrow(/HTTP_MAX_CONNECTIONS/);
  });
});
