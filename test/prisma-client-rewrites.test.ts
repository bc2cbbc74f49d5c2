// The two rewrites scripts/prismaClientRewrites.mjs makes to the generated Prisma clients (npm run
// generate), read back from src/generated: the parameterization schema's string indices moved up by
// 1,024 (its objects then take ~1.7 MB of heap per client instead of ~9 MB) and the query compiler's
// WebAssembly read as text rather than imported. Decoded here by a reader of the format written
// independently of the rewrite, so a wrong offset shows as an edge that names the wrong field.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const PAD = 1024;

interface Schema {
  strings: string[];
  inputs: Map<number, { key: number; child?: number; enumName?: number }>[];
  outputs: Map<number, { args?: number; output?: number }>[];
  roots: Map<number, { args?: number; output?: number }>;
}

function generated(db: "sqlite" | "postgres") {
  const source = readFileSync(`src/generated/${db}/internal/class.ts`, "utf8");
  const m = /strings: Array\((\d+)\)\.fill\(""\)\.concat\(JSON\.parse\(("(?:[^"\\]|\\.)*")\)\),\n {2}graph: "([A-Za-z0-9_-]*)"/.exec(source);
  if (!m) throw new Error(`src/generated/${db}/internal/class.ts has no padded parameterization schema: run npm run generate`);
  const strings = [...Array<string>(Number(m[1])).fill(""), ...(JSON.parse(JSON.parse(m[2]!) as string) as string[])];
  return { source, schema: decode(strings, m[3]!) };
}

/** Prisma 7's layout of the graph (its ParameterizationSchema deserializer): varints, a uint16 scalar mask and a uint8 of flags per input edge. */
function decode(strings: string[], graph: string): Schema {
  const bytes = Buffer.from(graph, "base64url");
  let at = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = bytes[at++]!;
      value += (byte & 127) * 2 ** shift;
      if (byte < 128) return value;
    }
  };
  const optional = () => {
    const v = varint();
    return v === 0 ? undefined : v - 1;
  };
  const [inputCount, outputCount, rootCount] = [varint(), varint(), varint()];
  const inputs: Schema["inputs"] = [];
  for (let n = 0; n < inputCount; n++) {
    const edges = new Map();
    for (let e = varint(); e > 0; e--) {
      const key = varint();
      at += 2;
      const child = optional();
      const enumName = optional();
      at += 1;
      edges.set(key, { key, child, enumName });
    }
    inputs.push(edges);
  }
  const outputs: Schema["outputs"] = [];
  for (let n = 0; n < outputCount; n++) {
    const edges = new Map();
    for (let e = varint(); e > 0; e--) edges.set(varint(), { args: optional(), output: optional() });
    outputs.push(edges);
  }
  const roots: Schema["roots"] = new Map();
  for (let n = 0; n < rootCount; n++) roots.set(varint(), { args: optional(), output: optional() });
  expect(at).toBe(bytes.length);
  return { strings, inputs, outputs, roots };
}

describe.each(["sqlite", "postgres"] as const)("the generated %s client", (db) => {
  it("names every field of its parameterization schema past the 1,024 empty strings in front", () => {
    const { schema } = generated(db);
    const { strings } = schema;
    expect(strings.slice(0, PAD).every((s) => s === "")).toBe(true);
    // No string of Prisma's own list is empty: the padding is the only "" and never named by the graph.
    expect(strings.slice(PAD).every((s) => s !== "")).toBe(true);
    const named = (i: number | undefined) => i === undefined || (i >= PAD && i < strings.length);
    for (const node of [...schema.inputs, ...schema.outputs]) for (const key of node.keys()) expect(named(key)).toBe(true);
    for (const node of schema.inputs) for (const edge of node.values()) expect(named(edge.enumName)).toBe(true);
    for (const key of schema.roots.keys()) expect(named(key)).toBe(true);
    expect(schema.inputs.length).toBeGreaterThan(1000);
  });

  it("still leads from a root to the right fields (Account.findMany → where → id; its selection's relation → where)", () => {
    const { schema } = generated(db);
    const index = (name: string) => schema.strings.indexOf(name);
    const root = schema.roots.get(index("Account.findMany"));
    expect(root?.args).toBeDefined();
    const where = schema.inputs[root!.args!]!.get(index("where"));
    expect(where?.child).toBeDefined();
    const whereInput = schema.inputs[where!.child!]!;
    expect(whereInput.has(index("id"))).toBe(true);
    expect(whereInput.has(index("name"))).toBe(true);
    expect(whereInput.has(index("memberships"))).toBe(true);
    // The selection side: the relation of the result, with arguments of its own (where, orderBy, ...).
    const memberships = schema.outputs[root!.output!]!.get(index("memberships"));
    expect(schema.inputs[memberships!.args!]!.has(index("where"))).toBe(true);
  });

  it("reads the query compiler's WebAssembly as text from the module it no longer imports", () => {
    const { source } = generated(db);
    const specifier = /createRequire\(import\.meta\.url\)\.resolve\("([^"]+)"\)/.exec(source)?.[1];
    expect(specifier).toMatch(/^@prisma\/client\/runtime\/query_compiler_small_bg\.\w+\.wasm-base64\.mjs$/);
    expect(source).not.toMatch(/import\("@prisma\/client\/runtime\/query_compiler_\w+_bg\.\w+\.wasm-base64\.mjs"\)/);
    const text = readFileSync(createRequire(import.meta.url).resolve(specifier!), "utf8");
    const wasm = /^const wasm = "([A-Za-z0-9+/=]*)";/.exec(text)?.[1];
    expect(wasm && new WebAssembly.Module(Buffer.from(wasm, "base64"))).toBeInstanceOf(WebAssembly.Module);
  });
});
