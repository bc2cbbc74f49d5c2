// Serves the route table. Every route executes its GraphQL document in process, through the envelop
// Yoga builds for each request (as SOFA does): the same context factory, plugins (limits, metrics)
// and error masking as POST /graphql, but no HTTP request to ourselves and no JSON between the
// layers: the document was parsed and validated at start-up, the variables are the route's objects
// and the reply maps the execution result object.
import express, { type Request, type Response, type Router } from "express";
import type { DocumentNode, ExecutionResult } from "graphql";
import type { YogaServerInstance } from "graphql-yoga";
import { KEY_HEADER, USER_HEADER } from "../auth/identity.js";
import { knownError } from "../errors.js";
import { logger } from "../logger.js";
import { bodyErrorProblem, HttpProblem, problem, problemFromGraphQL, sendProblem, type Problem } from "./problem.js";
import type { RestInput, RestRoute } from "./routes.js";

export const JSON_BODY_LIMIT = "10mb";
type ServerContext = { req: Request; res: Response };

type Yoga = YogaServerInstance<ServerContext, object>;

export function restRouter(routes: RestRoute[], yoga: Yoga, documents: ReadonlyMap<string, DocumentNode>): Router {
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
        await runRoute(route, yoga, documents.get(route.document)!, input, req, res);
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

async function runRoute(route: RestRoute, yoga: Yoga, document: DocumentNode, input: RestInput, req: Request, res: Response) {
  // No body at all: no Content-Length (or `Content-Length: 0`, which fetch sends for a bodiless POST) and no chunked body.
  const noBody = Number(req.get("content-length") ?? 0) === 0 && !req.get("transfer-encoding");
  if (route.jsonBody && req.body === undefined && !(route.optionalBody && noBody)) {
    throw new HttpProblem(415, "Send the body as JSON with Content-Type: application/json.");
  }
  const variables = route.variables(input);
  const result = await execute(yoga, document, variables, req, res);
  if (result.errors?.length) return fail(route, input, res, ...problemFromGraphQL(result.errors));
  const reply = route.reply(result.data, input);
  if (reply.headers) res.set(reply.headers);
  if (reply.problem) return fail(route, input, res, reply.problem);
  if (reply.body === undefined) return void res.status(reply.status).end();
  res.status(reply.status).json(reply.body);
}

/** The headers the GraphQL context reads (credentials, request id), as the Headers it expects. */
function contextHeaders(req: Request): Headers {
  const headers = new Headers();
  for (const h of [KEY_HEADER, USER_HEADER, "x-request-id"]) {
    const v = req.get(h);
    if (v !== undefined) headers.set(h, v);
  }
  return headers;
}

/** Runs a pre-parsed, pre-validated document through this request's envelop. */
async function execute(yoga: Yoga, document: DocumentNode, variableValues: Record<string, unknown>, req: Request, res: Response): Promise<ExecutionResult> {
  const request = { headers: contextHeaders(req) } as unknown as globalThis.Request;
  const enveloped = yoga.getEnveloped({ req, res, request } as never);
  try {
    const contextValue = await enveloped.contextFactory();
    return (await enveloped.execute({ schema: enveloped.schema, document, contextValue, variableValues })) as ExecutionResult;
  } catch (err) {
    // What Yoga would do with an error thrown outside execution (e.g. by the context factory).
    const known = knownError(err);
    if (known) return { errors: [known] };
    throw err;
  }
}
