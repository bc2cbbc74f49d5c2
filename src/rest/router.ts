// Serves the route table. Every route runs its GraphQL document through Yoga (yoga.fetch), so REST
// and GraphQL share one context factory, one auth model, one set of plugins and one error masking.
import express, { type Request, type Response, type Router } from "express";
import type { ExecutionResult } from "graphql";
import type { YogaServerInstance } from "graphql-yoga";
import { KEY_HEADER, USER_HEADER } from "../auth/identity.js";
import { logger } from "../logger.js";
import { bodyErrorProblem, HttpProblem, problem, problemFromGraphQL, sendProblem, type Problem } from "./problem.js";
import type { RestInput, RestRoute } from "./routes.js";

export const JSON_BODY_LIMIT = "10mb";
type ServerContext = { req: Request; res: Response };

export function restRouter(routes: RestRoute[], yoga: YogaServerInstance<ServerContext, object>): Router {
  const router = express.Router();
  const json = express.json({ limit: JSON_BODY_LIMIT, type: ["application/json", "application/*+json"] });
  for (const route of routes) {
    // Body-parser failures become this route's failure response (problem+json, or the spec's own shape).
    const parseBody = (req: Request, res: Response, next: (err?: unknown) => void) =>
      json(req, res, (err?: unknown) => {
        const p = err ? bodyErrorProblem(err) : null;
        if (!p) return next(err);
        fail(route, { params: req.params as Record<string, string>, query: req.query as Record<string, unknown>, body: undefined }, res, p);
      });
    const handlers = route.jsonBody ? [parseBody] : [];
    router[route.method](route.path, ...handlers, async (req: Request, res: Response) => {
      const input: RestInput = { params: req.params as Record<string, string>, query: req.query as Record<string, unknown>, body: req.body };
      try {
        await runRoute(route, yoga, input, req, res);
      } catch (err) {
        if (err instanceof HttpProblem) return fail(route, input, res, problem(err.status, err.message, err.errors), err.headers);
        logger.error({ err, route: route.name, requestId: req.get("x-request-id") }, "REST route failed");
        fail(route, input, res, problem(500, "Unexpected error; the request may succeed on retry."));
      }
    });
  }
  return router;
}

/** Failure response: problem+json, or the route's own error body where the spec gives one. */
function fail(route: RestRoute, input: RestInput, res: Response, p: Problem, headers?: Record<string, string>) {
  if (!route.errorBody) return sendProblem(res, p, headers);
  if (headers) res.set(headers);
  const messages = p.errors?.length ? p.errors.map((e) => e.message) : [p.detail];
  res.status(p.status).json(route.errorBody(p.status, p.status >= 500 ? [p.detail] : messages, input));
}

async function runRoute(route: RestRoute, yoga: YogaServerInstance<ServerContext, object>, input: RestInput, req: Request, res: Response) {
  // No body at all: no Content-Length (or `Content-Length: 0`, which fetch sends for a bodiless POST) and no chunked body.
  const noBody = Number(req.get("content-length") ?? 0) === 0 && !req.get("transfer-encoding");
  if (route.jsonBody && req.body === undefined && !(route.optionalBody && noBody)) {
    throw new HttpProblem(415, "Send the body as JSON with Content-Type: application/json.");
  }
  const variables = route.variables(input);
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  for (const h of [KEY_HEADER, USER_HEADER, "x-request-id"]) {
    const v = req.get(h);
    if (v !== undefined) headers[h] = v;
  }
  const response = await yoga.fetch(
    "http://rest.internal/graphql",
    { method: "POST", headers, body: JSON.stringify({ query: route.document, variables }) },
    { req, res },
  );
  const result = (await response.json()) as ExecutionResult;
  if (result.errors?.length) {
    const retryAfter = response.headers.get("retry-after");
    return fail(route, input, res, problemFromGraphQL(result.errors), retryAfter ? { "Retry-After": retryAfter } : undefined);
  }
  const reply = route.reply(result.data, input);
  if (reply.headers) res.set(reply.headers);
  if (reply.problem) return fail(route, input, res, reply.problem);
  if (reply.body === undefined) return void res.status(reply.status).end();
  res.status(reply.status).json(reply.body);
}
