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
