// GET /openapi.json (generated from the route table) and GET /docs, the API reference page: Swagger UI
// served from node_modules, so the page works without reaching any CDN.
import { createRequire } from "node:module";
import { dirname } from "node:path";
import express, { type Router } from "express";
import type { GraphQLSchema } from "graphql";
import { logger } from "../logger.js";
import { methodNotAllowed, problem, sendProblem } from "../rest/problem.js";
import type { RestRoute } from "../rest/routes.js";
import { buildOpenApi, type OpenApiOptions } from "./document.js";

const require = createRequire(import.meta.url);
const SWAGGER_UI_DIR = dirname(require.resolve("swagger-ui-dist/package.json"));
const { version } = require("../../package.json") as { version: string };

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>guidegate API reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>`;

// validatorUrl null: Swagger UI would otherwise send the document to an online validator.
const INIT = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  displayOperationId: true,
  docExpansion: "list",
  defaultModelsExpandDepth: 0,
  validatorUrl: null,
});`;

export function openApiRouter(routes: readonly RestRoute[], schema: GraphQLSchema, opts: OpenApiOptions = {}): Router {
  const router = express.Router();
  // Built on first request, not at start-up: a route the generator cannot describe breaks the
  // document (and test/openapi.test.ts), not the whole server.
  let json: string | undefined;
  router.get("/openapi.json", (_req, res) => {
    try {
      json ??= JSON.stringify(buildOpenApi(routes, schema, { version, ...opts }));
    } catch (err) {
      logger.error({ err }, "OpenAPI document generation failed");
      return sendProblem(res, problem(500, "The OpenAPI document could not be generated."));
    }
    res.type("application/json").send(json);
  });
  router.get("/docs", (_req, res) => void res.type("html").send(PAGE));
  router.get("/docs/init.js", (_req, res) => void res.type("application/javascript").send(INIT));
  router.use("/docs/assets", express.static(SWAGGER_UI_DIR, { index: false, maxAge: "1d" }));
  // Other methods on these paths: 405 with Allow, as on every known path.
  router.all(["/openapi.json", "/docs", "/docs/init.js"], methodNotAllowed(["GET"]));
  return router;
}
