// B8/B9 and the download, on the directory back-end and on S3 (a real s3rver on a local port):
// uploads stream into blob storage under their sha256, bad uploads leave nothing behind, lists
// page by keyset cursor, downloads carry ETag and answer If-None-Match with 304, and tenants
// never see each other's files.

import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blobStore } from "../src/blob/index.js";
import { blobKeyOf } from "../src/domains/files/upload.js";
import { gql, prisma, requester, type Server, startServer, type Tenant, tenant } from "./helpers.js";

const MiB = 1024 * 1024;

function pdf(size = 2048): Buffer {
  const head = Buffer.from("%PDF-1.7\n");
  const tail = Buffer.from("\n%%EOF\n");
  return Buffer.concat([head, randomBytes(Math.max(0, size - head.length - tail.length)), tail]);
}
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** The files under `dir`, relative to it. */
async function walk(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(dir, join(d.parentPath, d.name)));
}

function suite(name: string, setup: () => Promise<{ env: Record<string, string>; objects: () => Promise<string[]>; teardown: () => Promise<void> }>) {
  describe(name, () => {
    let server: Server;
    let a: Tenant;
    let b: Tenant;
    let objects: () => Promise<string[]>;
    let teardown: () => Promise<void>;
    const req = requester(() => server);
    const upload = (t: Tenant, body: BodyInit | Buffer, path = "flow-1/3/1718000000000/guide.pdf", headers: Record<string, string> = {}) =>
      fetch(`${server.url}/v1/accounts/${t.accountId}/content/upload/cloud/pdf/${path}`, {
        method: "POST",
        headers: { "content-type": "application/pdf", ...t.headers, ...headers },
        body: body as BodyInit,
        duplex: "half",
      } as RequestInit);

    beforeAll(async () => {
      const s = await setup();
      objects = s.objects;
      teardown = s.teardown;
      server = await startServer(s.env);
      a = await tenant("files");
      b = await tenant("files");
    });
    afterAll(async () => {
      await server.close();
      await teardown();
    });

    it("uploads a PDF: 201 with the file record, the row, and the bytes under their sha256", async () => {
      const bytes = pdf(300_000);
      const res = await upload(a, bytes, "flow-1/3/1718000000000/Guide%20%C3%A9t%C3%A9.pdf");
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(201);
      expect(body).toEqual({
        id: expect.stringMatching(/^f_/),
        filename: "Guide été.pdf",
        flowId: "flow-1",
        version: 3,
        timestamp: 1718000000000,
        contentType: "application/pdf",
        size: bytes.length,
        sha256: sha(bytes),
        uploadTime: expect.any(Number),
        url: `/v1/accounts/${a.accountId}/files/${body.id}`,
      });
      const row = await prisma.storedFile.findUniqueOrThrow({ where: { id: body.id } });
      expect(row).toMatchObject({ accountId: a.accountId, sha256: sha(bytes), size: bytes.length, version: 3n, filename: "Guide été.pdf" });
      expect(await blobStore().exists(blobKeyOf(sha(bytes)))).toBe(true);
      expect((await objects()).filter((k) => !k.includes("sha256"))).toEqual([]);
      const audit = await prisma.auditLog.findMany({ where: { accountId: a.accountId, resourceType: "file", resourceId: body.id } });
      expect(audit.map((e) => [e.action, e.userId])).toEqual([["create", a.email]]);

      // Download: the same bytes with the documented headers; If-None-Match → 304 without a body.
      const dl = await fetch(server.url + body.url, { headers: a.headers });
      expect(dl.status).toBe(200);
      expect(dl.headers.get("content-type")).toBe("application/pdf");
      expect(dl.headers.get("content-length")).toBe(String(bytes.length));
      expect(dl.headers.get("etag")).toBe(`"${sha(bytes)}"`);
      expect(dl.headers.get("content-disposition")).toBe(`attachment; filename="Guide _t_.pdf"; filename*=UTF-8''Guide%20%C3%A9t%C3%A9.pdf`);
      expect(Buffer.from(await dl.arrayBuffer()).equals(bytes)).toBe(true);
      const cached = await fetch(server.url + body.url, { headers: { ...a.headers, "if-none-match": `"${sha(bytes)}"` } });
      expect(cached.status).toBe(304);
      expect(cached.headers.get("etag")).toBe(`"${sha(bytes)}"`);
      expect(await cached.text()).toBe("");
      const stale = await fetch(server.url + body.url, { headers: { ...a.headers, "if-none-match": '"other"' } });
      expect(stale.status).toBe(200);
      await stale.arrayBuffer();
    });

    it("Range (RFC 9110): one byte range is a 206 read as a range from the store; past the end a 416; several, malformed or a stale If-Range the whole file", async () => {
      const bytes = pdf(100_000);
      const made = await (await upload(a, bytes, "flow-7/1/1/ranges.pdf")).json();
      const url = server.url + made.url;
      const etag = `"${sha(bytes)}"`;
      const rowBefore = await prisma.storedFile.findUniqueOrThrow({ where: { id: made.id } });
      const countBefore = await prisma.storedFile.count();
      const store = blobStore();
      const reads: unknown[] = [];
      const get = store.get.bind(store);
      store.get = (key, range) => {
        reads.push(range ?? "whole");
        return get(key, range);
      };
      try {
        const dl = (headers: Record<string, string>, method = "GET") => fetch(url, { method, headers: { ...a.headers, ...headers } });

        // The whole file says that ranges are served.
        const whole = await dl({});
        expect([whole.status, whole.headers.get("accept-ranges"), whole.headers.get("content-range")]).toEqual([200, "bytes", null]);
        expect(Buffer.from(await whole.arrayBuffer()).equals(bytes)).toBe(true);
        expect(reads.splice(0)).toEqual(["whole"]);

        // One range: 206 with exactly those bytes, read as that range from the store.
        for (const [range, start, end] of [
          ["bytes=0-99", 0, 99],
          ["bytes=0-0", 0, 0],
          ["bytes=99000-", 99_000, 99_999],
          ["bytes=-500", 99_500, 99_999],
          ["bytes=99990-200000", 99_990, 99_999], // last-pos past the end: up to the end
          ["bytes=-200000", 0, 99_999], // a suffix longer than the file: all of it
          ["BYTES = 10-19 ,", 10, 19], // the unit is case-insensitive; an empty list element is no range
        ] as const) {
          const r = await dl({ range });
          expect(r.status, range).toBe(206);
          expect(r.headers.get("content-range"), range).toBe(`bytes ${start}-${end}/100000`);
          expect(r.headers.get("content-length"), range).toBe(String(end - start + 1));
          expect([r.headers.get("content-type"), r.headers.get("etag"), r.headers.get("accept-ranges")]).toEqual(["application/pdf", etag, "bytes"]);
          expect(r.headers.get("content-disposition")).toMatch(/^attachment; filename="ranges.pdf"/);
          expect(Buffer.from(await r.arrayBuffer()).equals(bytes.subarray(start, end + 1)), range).toBe(true);
          expect(reads.splice(0), range).toEqual([{ start, end }]);
        }

        // Nothing of the file: 416 with the size, as problem+json naming the header; nothing read.
        for (const range of ["bytes=100000-", "bytes=100000-100005", "bytes=-0"]) {
          const r = await dl({ range });
          const body = await r.json();
          expect([r.status, r.headers.get("content-type"), r.headers.get("content-range")], range).toEqual([
            416,
            "application/problem+json; charset=utf-8",
            "bytes */100000",
          ]);
          expect(body, range).toEqual({
            type: "about:blank",
            title: "Range Not Satisfiable",
            status: 416,
            detail: expect.stringContaining("which has 100000"),
            errors: [{ path: "Range", message: expect.stringContaining("which has 100000") }],
          });
        }
        expect(reads.splice(0)).toEqual([]);

        // Ignored (RFC 9110 §14.2 allows it): several ranges, another unit, a malformed range, a
        // stale or weak If-Range, a date in If-Range (no Last-Modified is sent): 200, the whole file.
        for (const headers of [
          { range: "bytes=0-9,20-29" },
          { range: "bytes=0-9, 200000-" },
          { range: "items=0-9" },
          { range: "bytes=abc" },
          { range: "bytes=9-0" },
          { range: "bytes=1e3-" },
          { range: "bytes 0-9" },
          { range: "bytes=0-9", "if-range": '"other"' },
          { range: "bytes=0-9", "if-range": `W/${etag}` },
          { range: "bytes=0-9", "if-range": "Fri, 27 Nov 2026 00:00:00 GMT" },
        ] as Record<string, string>[]) {
          const r = await dl(headers);
          expect([r.status, r.headers.get("content-length"), r.headers.get("content-range"), r.headers.get("accept-ranges")], JSON.stringify(headers)).toEqual([
            200,
            "100000",
            null,
            "bytes",
          ]);
          expect(Buffer.from(await r.arrayBuffer()).equals(bytes), JSON.stringify(headers)).toBe(true);
        }
        expect(reads.splice(0)).toEqual(Array(10).fill("whole"));

        // If-Range naming the current tag keeps the range; If-None-Match naming it is a 304 first.
        const kept = await dl({ range: "bytes=5-9", "if-range": etag });
        expect([kept.status, kept.headers.get("content-range")]).toEqual([206, "bytes 5-9/100000"]);
        expect(Buffer.from(await kept.arrayBuffer()).equals(bytes.subarray(5, 10))).toBe(true);
        const notModified = await dl({ range: "bytes=5-9", "if-none-match": etag });
        expect([notModified.status, notModified.headers.get("content-range"), await notModified.text()]).toEqual([304, null, ""]);
        expect(reads.splice(0)).toEqual([{ start: 5, end: 9 }]);

        // HEAD: the whole file's headers without a body; a Range is for GET only (§14.2).
        for (const headers of [{}, { range: "bytes=0-99" }] as Record<string, string>[]) {
          const r = await dl(headers, "HEAD");
          expect([r.status, r.headers.get("content-length"), r.headers.get("accept-ranges"), r.headers.get("etag"), r.headers.get("content-range")]).toEqual([
            200,
            "100000",
            "bytes",
            etag,
            null,
          ]);
          expect(await r.text()).toBe("");
        }

        // A browser's viewer on another origin may send Range and If-Range and read what answers them.
        const preflight = await fetch(url, {
          method: "OPTIONS",
          headers: {
            origin: "https://viewer.example",
            "access-control-request-method": "GET",
            "access-control-request-headers": "range,if-range,x-service-user",
          },
        });
        expect((preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/\s*,\s*/)).toEqual(
          expect.arrayContaining(["range", "if-range"]),
        );
        const cross = await dl({ range: "bytes=0-9", origin: "https://viewer.example" });
        await cross.arrayBuffer();
        expect((cross.headers.get("access-control-expose-headers") ?? "").toLowerCase().split(/\s*,\s*/)).toEqual(
          expect.arrayContaining(["accept-ranges", "content-range", "etag"]),
        );
        reads.splice(0);

        // Another tenant learns nothing through a Range: 403 on A's path, 404 on its own.
        expect((await fetch(url, { headers: { ...b.headers, range: "bytes=0-9" } })).status).toBe(403);
        const viaB = await fetch(`${server.url}/v1/accounts/${b.accountId}/files/${made.id}`, { headers: { ...b.headers, range: "bytes=0-9" } });
        expect([viaB.status, (await viaB.json()).status]).toEqual([404, 404]);
      } finally {
        store.get = get;
      }
      // Reads change nothing.
      expect(await prisma.storedFile.findUniqueOrThrow({ where: { id: made.id } })).toEqual(rowBefore);
      expect(await prisma.storedFile.count()).toBe(countBefore);
    });

    it("the store reads a range as a range: only those bytes, and the whole object's size", async () => {
      const bytes = pdf(70_000);
      await (await upload(a, bytes, "flow-8/1/1/store.pdf")).json();
      const got = await blobStore().get(blobKeyOf(sha(bytes)), { start: 1000, end: 60_999 });
      expect(got?.size).toBe(70_000);
      const chunks: Buffer[] = [];
      for await (const c of got!.body) chunks.push(c as Buffer);
      expect(Buffer.concat(chunks).equals(bytes.subarray(1000, 61_000))).toBe(true);
    });

    it("a file whose bytes the store lost answers 500 saying so (the service's fault, not an unknown file)", async () => {
      const bytes = pdf(5_123); // (bytes no other test uploads: the stored object is shared by equal bytes)
      const made = await (await upload(a, bytes, "flow-9/1/1/lost.pdf")).json();
      await blobStore().delete(blobKeyOf(sha(bytes)));
      const r = await fetch(server.url + made.url, { headers: a.headers });
      const body = await r.json();
      expect([r.status, body.detail]).toEqual([500, expect.stringMatching(/^The file's bytes are missing from storage: several instances need one store/)]);
    });

    it("equal bytes uploaded twice are two files sharing one stored object", async () => {
      const bytes = pdf(10_000);
      const first = await (await upload(a, bytes)).json();
      const before = (await objects()).length;
      const second = await (await upload(a, bytes, "flow-2/1/1/copy.pdf")).json();
      expect(second.id).not.toBe(first.id);
      expect(second.sha256).toBe(first.sha256);
      expect((await objects()).length).toBe(before);
    });

    it("refuses what is not a PDF, and leaves nothing behind", async () => {
      const rows = await prisma.storedFile.count();
      const stored = (await objects()).length;
      const cases: [string, BodyInit, Record<string, string>, number, RegExp][] = [
        ["garbage", randomBytes(5000), {}, 400, /does not start with %PDF-/],
        ["a PDF header on garbage", Buffer.concat([Buffer.from("%PDF-1.4\n"), randomBytes(5000)]), {}, 400, /no %%EOF/],
        ["empty", Buffer.alloc(0), {}, 400, /empty/],
        ["JSON", JSON.stringify({ pdf: true }), { "content-type": "application/json" }, 415, /application\/pdf/],
      ];
      for (const [what, body, headers, status, detail] of cases) {
        const res = await upload(a, body, undefined, headers);
        const p = await res.json();
        expect(res.status, what).toBe(status);
        expect(res.headers.get("content-type"), what).toMatch(/application\/problem\+json/);
        expect(p.detail, what).toMatch(detail);
      }
      expect(await prisma.storedFile.count()).toBe(rows);
      expect((await objects()).length).toBe(stored);
    });

    it("a compressed upload is stored decoded (gzip, deflate, br); another coding is a 415, bytes that do not decode a 400, past 25 MiB decoded a 413", async () => {
      const bytes = pdf(200_000);
      for (const [coding, encoded] of [
        ["gzip", gzipSync(bytes)],
        ["deflate", deflateSync(bytes)],
        ["br", brotliCompressSync(bytes)],
      ] as const) {
        const res = await upload(a, encoded, `flow-1/1/1/${coding}.pdf`, { "content-encoding": coding });
        const body = await res.json();
        expect([coding, res.status, body.size, body.sha256]).toEqual([coding, 201, bytes.length, sha(bytes)]);
      }
      const rows = await prisma.storedFile.count();
      const stored = (await objects()).length;
      for (const [headers, body, status, detail] of [
        [{ "content-encoding": "xyz" }, bytes, 415, /^Content-Encoding "xyz" is not supported: send the body as gzip, deflate, br or identity/],
        [{ "content-encoding": "gzip" }, bytes, 400, /^The request body could not be decompressed \(gzip\): /],
        [{ "content-encoding": "gzip" }, gzipSync(Buffer.concat([bytes.subarray(0, 5), Buffer.alloc(26 * MiB)])), 413, /larger than the limit/],
      ] as const) {
        const res = await upload(a, body as Buffer, undefined, headers);
        const p = await res.json();
        expect([res.status, p.detail]).toEqual([status, expect.stringMatching(detail)]);
      }
      expect(await prisma.storedFile.count()).toBe(rows);
      expect((await objects()).length).toBe(stored);
    });

    it("413 past 25 MiB, declared or streamed, and nothing stored", async () => {
      const rows = await prisma.storedFile.count();
      const stored = (await objects()).length;
      const declared = await upload(a, pdf(25 * MiB + 1));
      expect(declared.status).toBe(413);
      expect((await declared.json()).detail).toMatch(/25 MiB/);
      // Chunked (no Content-Length): refused while streaming.
      let sent = 0;
      const chunk = pdf(MiB);
      const stream = new ReadableStream({
        pull(c) {
          if (sent >= 26) return c.close();
          sent++;
          c.enqueue(new Uint8Array(chunk));
        },
      });
      const streamed = await upload(a, stream).catch((err) => err as Error);
      if (streamed instanceof Response) {
        expect(streamed.status).toBe(413);
        expect(streamed.headers.get("connection")).toBe("close");
      }
      expect(await prisma.storedFile.count()).toBe(rows);
      await new Promise((r) => setTimeout(r, 200));
      expect((await objects()).length).toBe(stored);
      // Exactly 25 MiB is fine.
      const max = await upload(a, pdf(25 * MiB), "flow-1/1/1/max.pdf");
      expect(max.status).toBe(201);
      expect((await max.json()).size).toBe(25 * MiB);
    });

    it("bad path values are 400 before the body is read", async () => {
      const bad = [
        ["..%2F..%2Fetc%2Fpasswd.pdf", /filename/],
        ["a%00b.pdf", /filename/],
        ["a%5Cb.pdf", /filename/],
        [`${"x".repeat(300)}.pdf`, /filename/],
        // U+202E shows "<RLO>fdp.exe" as "exe.pdf"; U+2067 and U+200F are bidirectional controls too.
        ["%E2%80%AEfdp.exe", /filename must not contain bidirectional formatting characters/],
        ["a%E2%81%A7b.pdf", /bidirectional/],
        ["a%E2%80%8Fb.pdf", /bidirectional/],
      ] as const;
      for (const [filename, detail] of bad) {
        const res = await upload(a, pdf(100), `flow-1/1/1/${filename}`);
        expect(res.status, filename).toBe(400);
        expect((await res.json()).detail, filename).toMatch(detail);
      }
      for (const [path, field] of [
        ["flow-1/abc/1/x.pdf", "version"],
        ["flow-1/-1/1/x.pdf", "version"],
        ["flow-1/1/1.5/x.pdf", "timestamp"],
        ["flow%201/1/1/x.pdf", "flowId"],
        ["..%2Fx/1/1/x.pdf", "flowId"],
      ]) {
        const res = await upload(a, pdf(100), path);
        expect(res.status, path).toBe(400);
        expect((await res.json()).detail, path).toMatch(field!);
      }
      expect(await prisma.storedFile.count({ where: { filename: { contains: "passwd" } } })).toBe(0);
    });

    it("lists by keyset cursor with contentType, fromTime and limit (B9); GraphQL lists the same", async () => {
      const t = await tenant("files");
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await (await upload(t, pdf(500 + i), `flow-1/${i}/1/f${i}.pdf`)).json()).id);
      const base = `/v1/accounts/${t.accountId}/content/upload/cloud/pdf/listS3DirContent`;
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const r = await req(`${base}?contentType=application/pdf&limit=2${cursor ? `&cursor=${cursor}` : ""}`, { headers: t.headers });
        expect(r.status).toBe(200);
        expect(r.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...r.body.data.map((f: { id: string }) => f.id));
        cursor = r.body.cursor;
      } while (cursor);
      expect(seen).toEqual(ids);
      const all = await req(`${base}?contentType=application/pdf`, { headers: t.headers });
      expect(all.body.data.map((f: { filename: string }) => f.filename)).toEqual(["f0.pdf", "f1.pdf", "f2.pdf", "f3.pdf", "f4.pdf"]);
      expect(all.body.cursor).toBeNull();
      // The short name `pdf` is the same filter; a type the service never stores is a 400, not an empty page.
      for (const same of ["pdf", "PDF", "Application/PDF"]) {
        expect((await req(`${base}?contentType=${encodeURIComponent(same)}`, { headers: t.headers })).body).toEqual(all.body);
      }
      for (const other of ["text/plain", "application/x-pdf", "pdfs"]) {
        const r = await req(`${base}?contentType=${encodeURIComponent(other)}`, { headers: t.headers });
        expect([r.status, r.body.errors]).toEqual([400, [{ path: "contentType", message: "must be one of application/pdf, pdf" }]]);
      }
      const later = await req(`${base}?contentType=application/pdf&fromTime=${Date.now() + 60_000}`, { headers: t.headers });
      expect(later.body.data).toEqual([]);
      for (const q of [
        "",
        "contentType=application/pdf&limit=0",
        "contentType=application/pdf&limit=10001",
        "contentType=application/pdf&cursor=%%%",
        "contentType=application/pdf&fromTime=x",
      ]) {
        const r = await req(`${base}?${q}`, { headers: t.headers });
        expect(r.status, q).toBe(400);
      }
      const g = await gql(
        server,
        t,
        `query($id: String!) { account(id: $id) { files(first: 3, filter: { contentType: "application/pdf" }) { nodes { id sha256 url } pageInfo { hasNextPage } } } }`,
        {
          id: t.accountId,
        },
      );
      expect(g.data?.account.files.nodes.map((n: { id: string }) => n.id)).toEqual(ids.slice(0, 3));
      expect(g.data?.account.files.pageInfo.hasNextPage).toBe(true);
      // GraphQL reads the filter as B9 does: media types in any letter case and the short name are
      // the stored type; another type is a 400 naming the filter, not an empty list.
      const listed = (contentType: string) =>
        gql(server, t, `query($id: String!, $type: String) { account(id: $id) { files(filter: { contentType: $type }) { nodes { id } } } }`, {
          id: t.accountId,
          type: contentType,
        });
      for (const same of ["pdf", "PDF", "Application/PDF"])
        expect(
          (await listed(same)).data?.account.files.nodes.map((n: { id: string }) => n.id),
          same,
        ).toEqual(ids);
      for (const other of ["text/plain", "pdfs"]) {
        const r = await listed(other);
        expect([r.errors?.[0]?.extensions?.code, r.errors?.[0]?.extensions?.errors], other).toEqual([
          "BAD_REQUEST",
          [{ path: "filter.contentType", message: "must be one of application/pdf, pdf" }],
        ]);
      }
      // The bytes travel over REST only.
      const m = await gql(server, t, `mutation($id: String!) { uploadPdf(accountId: $id, flowId: "f", version: 1, timestamp: 1, filename: "x.pdf") { id } }`, {
        id: t.accountId,
      });
      expect(m.errors?.[0]?.extensions?.code).toBe("BAD_REQUEST");
      expect(m.errors?.[0]?.message).toMatch(/REST route/);
      expect(await prisma.storedFile.count({ where: { accountId: t.accountId } })).toBe(5);
    });

    it("tenants: B's key can neither upload to, list, nor download A's files; A's file is not found through B", async () => {
      const mine = await (await upload(a, pdf(1000), "flow-9/1/1/secret.pdf")).json();
      const before = await prisma.storedFile.count();
      expect(await upload(b, pdf(1000), "flow-9/1/1/x.pdf", {}).then(async (r) => r.status)).toBe(201);
      const asB = { ...b.headers };
      const up = await fetch(`${server.url}/v1/accounts/${a.accountId}/content/upload/cloud/pdf/f/1/1/x.pdf`, {
        method: "POST",
        headers: { ...asB, "content-type": "application/pdf" },
        body: new Uint8Array(pdf(1000)),
      });
      expect(up.status).toBe(403);
      expect((await req(`/v1/accounts/${a.accountId}/content/upload/cloud/pdf/listS3DirContent?contentType=application/pdf`, { headers: asB })).status).toBe(
        403,
      );
      expect((await req(mine.url, { headers: asB })).status).toBe(403);
      const viaB = await req(`/v1/accounts/${b.accountId}/files/${mine.id}`, { headers: asB });
      expect(viaB.status).toBe(404);
      expect((await req(mine.url)).status).toBe(401);
      expect(await prisma.storedFile.count()).toBe(before + 1);
      expect((await req(`/v1/accounts/${a.accountId}/files/nope`, { headers: a.headers })).status).toBe(404);
    });
  });
}

suite("directory back-end", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gg-files-"));
  return { env: { FILES_DIR: dir }, objects: () => walk(dir), teardown: async () => rmSync(dir, { recursive: true, force: true }) };
});

suite("S3 back-end (s3rver)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gg-s3-"));
  const s3 = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: dir, configureBuckets: [{ name: "guidegate-test", configs: [] }] });
  const { port } = (await s3.run()) as { port: number };
  const env = {
    S3_BUCKET: "guidegate-test",
    S3_ENDPOINT: `http://127.0.0.1:${port}`,
    S3_ACCESS_KEY_ID: "S3RVER",
    S3_SECRET_ACCESS_KEY: "S3RVER",
    S3_PREFIX: "test/",
  };
  return {
    env,
    objects: async () => (await walk(dir)).filter((f) => f.endsWith("._S3rver_object")),
    teardown: async () => {
      await s3.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe("an S3 store that does not answer", () => {
  it("is a 503 with Retry-After (the request may succeed later), not a 500", async () => {
    const { S3Store } = await import("../src/blob/s3.js");
    const { Readable } = await import("node:stream");
    // Nothing listens on port 1: every request is refused.
    const store = new S3Store({
      bucket: "b",
      endpoint: "http://127.0.0.1:1",
      region: "us-east-1",
      accessKeyId: "x",
      secretAccessKey: "y",
      forcePathStyle: true,
      prefix: "",
    });
    try {
      for (const attempt of [
        () => store.get("k"),
        () => store.exists("k"),
        () => store.delete("k"),
        () => store.put("k", Readable.from([Buffer.from("%PDF-")]), "application/pdf"),
      ]) {
        const err = await attempt().then(
          () => null,
          (e: unknown) => e as { status?: number; headers?: Record<string, string>; message?: string },
        );
        expect([err?.status, err?.headers?.["Retry-After"], err?.message]).toEqual([503, "5", "File storage is unavailable at the moment; retry later."]);
      }
    } finally {
      await store.close();
    }
  }, 60_000);
});
