// POST /graphql (and GET /graphql?query=) executes nothing without valid credentials: every
// operation, introspection and `{ __typename }` included, is a 401 before its document is even
// parsed, so an anonymous caller learns nothing about the schema or about validation. Over HTTP the
// credentials are checked before the body is read (authenticateBeforeBody, from src/app.ts), and a
// request they do not authenticate has its body never read at all: its 401 takes the place of the
// request parser. The GraphiQL page itself stays public (Yoga serves it before parameters are
// read). The identity resolved here is handed to the request's context, so authentication still
// costs one lookup.
import type { IncomingMessage } from "node:http";
import type { Plugin } from "graphql-yoga";
import { authenticate, type Identity, KEY_HEADER, USER_HEADER } from "../auth/identity.js";
import { forbidden, knownError } from "../errors.js";
import { graphqlUnauthenticated } from "../observability/metrics.js";

const identities = new WeakMap<Request, Promise<Identity>>();
const beforeBody = new WeakMap<IncomingMessage, Promise<Identity>>();

/** The identity the plugin resolved for this request, if it ran. */
export const preauthenticated = (request: Request): Promise<Identity> | undefined => identities.get(request);

const header = (req: IncomingMessage, name: string) => {
  const value = req.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
};

/** Authenticates an HTTP request from its headers, before its body is read; the plugin reuses the result. */
export function authenticateBeforeBody(req: IncomingMessage): Promise<Identity> {
  const identity = authenticate({ key: header(req, KEY_HEADER), email: header(req, USER_HEADER) });
  beforeBody.set(req, identity);
  return identity;
}

/** What authenticateBeforeBody resolved for this request, if it ran. */
export const identityBeforeBody = (req: IncomingMessage): Promise<Identity> | undefined => beforeBody.get(req);

export function requireCredentials(): Plugin<Record<string, never>, { req?: IncomingMessage }> {
  return {
    onRequestParse({ request, serverContext, setRequestParser }) {
      const early = serverContext.req && beforeBody.get(serverContext.req);
      const identity = early ?? authenticate({ key: request.headers.get(KEY_HEADER), email: request.headers.get(USER_HEADER) });
      identities.set(request, identity);
      return identity.then(
        (found) => {
          // A write key (scope `ingest`) is public, embedded in web pages: it works on the ingestion
          // paths alone, so GraphQL refuses it whole, introspection and `{ __typename }` included.
          if (found.scope === "ingest")
            setRequestParser(() => {
              throw forbidden("An API key of scope 'ingest' (a write key) works on /segment/v1/* only, not on GraphQL.");
            });
        },
        (err: unknown) => {
          const known = knownError(err);
          if (!known) throw err;
          graphqlUnauthenticated();
          // Yoga answers the parser's error as it answers any: the 401, and the body is never read.
          setRequestParser(() => {
            throw known;
          });
        },
      );
    },
  };
}
