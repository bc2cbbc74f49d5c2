// The full collection after a large request (src/heapRelease.ts), over real HTTP: counted on the
// socket whatever the framing (a chunked body, a streamed answer), not for small requests, and at
// most once per interval unless the heap has doubled since the last one. And V8's collection itself is reachable
// without --expose-gc and without leaving a global `gc` behind.

import { request } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fullCollection, releaseHeapAfterLargeRequests } from "../src/heapRelease.js";

let clock = 1_000_000;
/** The heap in use as the middleware sees it. */
let heap = 50e6;
const collections: number[] = [];
let base = "";
let close = () => {};

beforeAll(async () => {
  const app = express();
  app.use(
    releaseHeapAfterLargeRequests({
      afterBytes: 100_000,
      minIntervalMs: 1_000,
      now: () => clock,
      heapUsed: () => heap,
      collect: () => collections.push(clock),
    }),
  );
  app.post("/echo-size", express.raw({ type: "*/*", limit: "10mb" }), (req, res) => {
    res.json({ bytes: (req.body as Buffer).length });
  });
  // A large answer streamed without a Content-Length (chunked), as the CSV routes answer.
  app.get("/stream", (_req, res) => {
    res.type("text/csv");
    for (let i = 0; i < 50; i++) res.write(`${"x".repeat(4_000)}\n`);
    res.end();
  });
  app.get("/small", (_req, res) => res.json({ ok: true }));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
afterAll(() => close());

const settle = () => new Promise((r) => setTimeout(r, 20));

/** A POST whose body is sent in chunks without a Content-Length. */
function postChunked(path: string, bytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: "POST", headers: { "content-type": "application/octet-stream" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    for (let sent = 0; sent < bytes; sent += 10_000) req.write(Buffer.alloc(Math.min(10_000, bytes - sent), 1));
    req.end();
  });
}

describe("a full collection after a large request", () => {
  it("does not run after small requests", async () => {
    for (let i = 0; i < 5; i++) expect((await fetch(`${base}/small`)).status).toBe(200);
    await postChunked("/echo-size", 20_000);
    await settle();
    expect(collections).toEqual([]);
  });

  it("runs once after a large chunked body, and not again within the interval", async () => {
    expect(await postChunked("/echo-size", 300_000)).toBe(200);
    await settle();
    expect(collections).toEqual([clock]);

    clock += 500;
    expect(await postChunked("/echo-size", 300_000)).toBe(200);
    await settle();
    expect(collections).toHaveLength(1);
  });

  it("counts a streamed answer and runs again once the interval has passed", async () => {
    clock += 1_000;
    const res = await fetch(`${base}/stream`);
    expect(res.headers.get("content-length")).toBeNull();
    expect((await res.text()).length).toBe(200_050);
    await settle();
    expect(collections).toEqual([clock - 1_000 - 500, clock]);
  });

  it("runs within the interval once the heap has doubled since the last collection", async () => {
    const before = collections.length;
    clock += 100;
    heap = 95e6; // below twice the 50 MB the last collection left
    expect(await postChunked("/echo-size", 300_000)).toBe(200);
    await settle();
    expect(collections).toHaveLength(before);

    heap = 100e6;
    expect(await postChunked("/echo-size", 300_000)).toBe(200);
    await settle();
    expect(collections).toEqual([...collections.slice(0, before), clock]);

    // Measured against what that collection left (100 MB now), not the first one.
    clock += 100;
    heap = 150e6;
    expect(await postChunked("/echo-size", 300_000)).toBe(200);
    await settle();
    expect(collections).toHaveLength(before + 1);
    heap = 50e6;
  });

  it("is off with afterBytes 0", async () => {
    let called = 0;
    const app = express();
    app.use(releaseHeapAfterLargeRequests({ afterBytes: 0, minIntervalMs: 0, collect: () => called++ }));
    app.post("/", express.raw({ type: "*/*", limit: "10mb" }), (_req, res) => res.end());
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: "POST", body: Buffer.alloc(500_000) });
    expect(res.status).toBe(200);
    await settle();
    server.close();
    expect(called).toBe(0);
  });
});

describe("fullCollection", () => {
  it("returns V8's collection without --expose-gc and leaves no global gc behind", () => {
    const hadGlobal = typeof (globalThis as { gc?: unknown }).gc === "function";
    const gc = fullCollection();
    expect(typeof gc).toBe("function");
    gc();
    expect(typeof (globalThis as { gc?: unknown }).gc === "function").toBe(hadGlobal);
  });
});
