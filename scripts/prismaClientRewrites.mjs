// Two rewrites of a generated Prisma client's class.ts (src/generated/<db>/internal/class.ts), run by
// scripts/generate.mjs after `prisma generate`, each for what an idle server holds (docs/performance.md,
// Idle). If a Prisma upgrade changes what they rewrite, they throw rather than guess.
//
// 1. The parameterization schema: what Prisma builds from it at run time takes ~1.7 MB of heap
// instead of ~9 MB per client. Every PrismaClient decodes `config.parameterizationSchema` (a list of
// strings and a base64url graph of varints) into objects, one per input type, whose edges are keyed by
// the index of a field name in that list: `edges = {}; edges[index] = {...}` (Prisma's runtime, class
// `ParameterizationSchema`). The indices run up to ~770 and V8 gives an object whose integer keys stay
// within 1024 of its capacity a flat ("holey") elements array as long as its largest key: 1,990 input
// types × up to ~1,150 slots made 9 MB per client, 13–18 MB on SQLite, which has two clients (reader
// and writer). A key 1,024 or more past an empty object's capacity makes V8 keep its elements as a
// dictionary (only the keys present, about 5 each here). So every string index is moved up by PAD:
// the list starts with PAD empty strings that nothing refers to, and the graph's indices are
// re-encoded + PAD.
// Behaviour is the same: Prisma looks a field name up in a Map built from the list (name → index),
// and reads `edges[index]`, `strings[enumNameIndex]` and the roots by name; a field name is never
// empty, so the padding is never found (an empty key maps to index PAD - 1, which no edge has: the
// same "no edge" answer as before). A dictionary lookup instead of an array index costs nanoseconds,
// once per argument and selected field when Prisma parameterizes a query for its plan cache.
//
// 2. The query compiler's WebAssembly: read as text and decoded, instead of imported. Imported, its
// module (`const wasm = "<2.2 MB of base64>"; export { wasm }`) stays in the heap for the life of
// the process twice: as the module's source and as the exported string. Read, both are garbage
// once the module is compiled. Only the connect of each client reads it (the same file, the same
// bytes), so no request waits for it.

/** The generated class.ts source with both rewrites (a source already rewritten is returned as is). */
export function rewriteGeneratedClient(source) {
  return readWasmAsText(spreadParameterizationSchema(source));
}

/** How far every string index is moved: V8's gap (JSObject::kMaxGap) past which elements go to a dictionary. */
export const PAD = 1024;

const pattern = /^config\.parameterizationSchema = \{\n {2}strings: JSON\.parse\(("(?:[^"\\]|\\.)*")\),\n {2}graph: "([A-Za-z0-9_-]*)"\n\}$/m;

/** The class.ts source with its parameterization schema's string indices moved up by PAD (an already rewritten source is returned as is). */
function spreadParameterizationSchema(source) {
  if (source.includes("strings: Array(")) return source;
  const m = pattern.exec(source);
  if (!m)
    throw new Error(
      'parameterizationSchema: the generated client has no `config.parameterizationSchema = { strings: JSON.parse(...), graph: "..." }`; update scripts/prismaClientRewrites.mjs for this Prisma version',
    );
  const graph = shiftGraph(m[2], PAD);
  // Built at load from the same JSON text: one empty string PAD times in front of the list.
  const replaced = `config.parameterizationSchema = {\n  // Padded by scripts/prismaClientRewrites.mjs: every string index + ${PAD}.\n  strings: Array(${PAD}).fill("").concat(JSON.parse(${m[1]})),\n  graph: "${graph}"\n}`;
  return source.slice(0, m.index) + replaced + source.slice(m.index + m[0].length);
}

/**
 * Re-encodes the graph with every string index + `by`. Its layout (Prisma 7's `ParameterizationSchema`
 * deserializer): varints of input node, output node and root counts; per input node a varint edge
 * count and, per edge, varint key (string index), uint16 scalar mask, varint child node (0: none,
 * else id + 1), varint enum name (0: none, else string index + 1), uint8 flags; per output node a
 * varint edge count and, per edge, varint key, varint args node, varint output node (0 or id + 1);
 * per root a varint name (string index), varint args node, varint output node.
 */
function shiftGraph(base64url, by) {
  const bytes = Buffer.from(base64url, "base64url");
  const out = [];
  let at = 0;
  const read = () => {
    let value = 0;
    let shift = 0;
    let byte;
    do {
      if (at >= bytes.length) throw new Error("parameterizationSchema: the graph ends inside a varint");
      byte = bytes[at++];
      value += (byte & 127) * 2 ** shift;
      shift += 7;
    } while (byte >= 128);
    return value;
  };
  const write = (value) => {
    do {
      const low = value % 128;
      value = Math.floor(value / 128);
      out.push(value ? low | 128 : low);
    } while (value);
  };
  const copy = (n) => {
    for (let i = 0; i < n; i++) out.push(bytes[at++]);
  };
  const inputs = read();
  const outputs = read();
  const roots = read();
  write(inputs);
  write(outputs);
  write(roots);
  for (let n = 0; n < inputs; n++) {
    const edges = read();
    write(edges);
    for (let e = 0; e < edges; e++) {
      write(read() + by); // key: a string index
      copy(2); // scalar mask
      write(read()); // child node
      const enumName = read();
      write(enumName === 0 ? 0 : enumName + by); // string index + 1, or 0
      copy(1); // flags
    }
  }
  for (let n = 0; n < outputs; n++) {
    const edges = read();
    write(edges);
    for (let e = 0; e < edges; e++) {
      write(read() + by); // key: a string index
      write(read()); // args node
      write(read()); // output node
    }
  }
  for (let n = 0; n < roots; n++) {
    write(read() + by); // name: a string index
    write(read());
    write(read());
  }
  if (at !== bytes.length) throw new Error(`parameterizationSchema: ${bytes.length - at} bytes of the graph left over; its format changed`);
  return Buffer.from(out).toString("base64url");
}

const wasmImport = /^( {4})const \{ wasm \} = await import\(("@prisma\/client\/runtime\/query_compiler_\w+_bg\.\w+\.wasm-base64\.mjs")\)$/m;

function readWasmAsText(source) {
  if (source.includes("Read as text by scripts/prismaClientRewrites.mjs")) return source;
  const m = wasmImport.exec(source);
  if (!m)
    throw new Error(
      'compilerWasm: the generated client has no `const { wasm } = await import("@prisma/client/runtime/query_compiler_…wasm-base64.mjs")`; update scripts/prismaClientRewrites.mjs for this Prisma version',
    );
  const [, indent, specifier] = m;
  const lines = [
    "// Read as text by scripts/prismaClientRewrites.mjs: imported, the module's 2.2 MB source and its string would stay in the heap.",
    'const { readFile } = await import("node:fs/promises")',
    'const { createRequire } = await import("node:module")',
    `const text = await readFile(createRequire(import.meta.url).resolve(${specifier}), "utf8")`,
    'const wasm = /^const wasm = "([A-Za-z0-9+/=]*)";/.exec(text)?.[1]',
    `if (!wasm) throw new Error(${JSON.stringify(`${JSON.parse(specifier)} is not \`const wasm = "<base64>"\``)})`,
  ];
  return source.slice(0, m.index) + lines.map((l) => indent + l).join("\n") + source.slice(m.index + m[0].length);
}
