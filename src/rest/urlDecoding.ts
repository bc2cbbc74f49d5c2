// A URL whose percent-encoding cannot be decoded (`%`, `%E0%A4%A`, an invalid UTF-8 sequence such as
// an encoded surrogate `%ED%A0%80`) is the client's mistake: a 400 problem naming the parameter,
// before any route runs (REST and GraphQL GET alike). Without this, Express's router throws a
// URIError while matching a path (a 500), and the query parser silently keeps the raw text.
import type { NextFunction, Request, Response } from "express";
import { match } from "path-to-regexp";
import { problem, sendProblem } from "./problem.js";

const decodes = (s: string) => {
  try {
    decodeURIComponent(s);
    return true;
  } catch {
    return false;
  }
};

/** Matchers of the route table's paths that leave values encoded, to name the segment that fails. */
function pathNamer(paths: readonly string[]) {
  const matchers = [...new Set(paths)].map((p) => match<Record<string, string>>(p, { decode: false }));
  return (rawPath: string): string | undefined => {
    for (const m of matchers) {
      const hit = m(rawPath);
      if (!hit) continue;
      for (const [name, value] of Object.entries(hit.params)) if (typeof value === "string" && !decodes(value)) return name;
    }
    return undefined;
  };
}

/** The first undecodable part of a request URL, as the parameter a caller would recognise. */
export function undecodableParameter(url: string, namePathParam: (rawPath: string) => string | undefined): { where: "path" | "query"; name: string } | null {
  const q = url.indexOf("?");
  const rawPath = q === -1 ? url : url.slice(0, q);
  if (!decodes(rawPath)) {
    const segment = rawPath.split("/").findIndex((s) => !decodes(s));
    return { where: "path", name: namePathParam(rawPath) ?? `segment ${segment}` };
  }
  if (q === -1) return null;
  for (const pair of url.slice(q + 1).split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const rawName = (eq === -1 ? pair : pair.slice(0, eq)).replace(/\+/g, " ");
    const rawValue = eq === -1 ? "" : pair.slice(eq + 1).replace(/\+/g, " ");
    if (!decodes(rawName)) return { where: "query", name: rawName };
    if (!decodes(rawValue)) return { where: "query", name: decodeURIComponent(rawName) };
  }
  return null;
}

/** Express middleware: 400 for a URL whose path or query does not decode, naming the parameter. */
export function rejectUndecodableUrls(routePaths: readonly string[]) {
  const namePathParam = pathNamer(routePaths);
  return (req: Request, res: Response, next: NextFunction) => {
    // The fast path: nothing to decode.
    if (!req.url.includes("%")) return next();
    const bad = undecodableParameter(req.url, namePathParam);
    if (!bad) return next();
    const message = "is not valid percent-encoded UTF-8";
    sendProblem(res, problem(400, `${bad.where === "path" ? "Path parameter" : "Query parameter"} ${bad.name} ${message}.`, [{ path: bad.name, message }]));
  };
}
