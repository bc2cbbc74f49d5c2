// POST /graphql (and GET /graphql?query=) executes nothing without valid credentials: every
// operation, introspection and `{ __typename }` included, is a 401 before its document is even
// parsed, so an anonymous caller learns nothing about the schema or about validation. The GraphiQL
// page itself stays public (Yoga serves it before parameters are read). The identity resolved
// here is handed to the request's context, so authentication still costs one lookup; a request the
// fast path handed over brings its context, whose identity is already resolved.
import type { Response } from "express";
import type { Plugin } from "graphql-yoga";
import { authenticate, type Identity, KEY_HEADER, USER_HEADER } from "../auth/identity.js";
import { knownError } from "../errors.js";
import { graphqlUnauthenticated } from "../observability/metrics.js";
import { handedOverContext } from "./fastPath.js";

const identities = new WeakMap<Request, Promise<Identity>>();

/** The identity the plugin resolved for this request, if it ran. */
export const preauthenticated = (request: Request): Promise<Identity> | undefined => identities.get(request);

export function requireCredentials(): Plugin {
  return {
    onParams({ request, setResult, context }) {
      const handedOver = handedOverContext((context as { res?: Response }).res);
      const identity = handedOver ? handedOver.identity() : authenticate({ key: request.headers.get(KEY_HEADER), email: request.headers.get(USER_HEADER) });
      identities.set(request, identity);
      return identity.then(
        () => undefined,
        (err: unknown) => {
          const known = knownError(err);
          if (!known) throw err;
          graphqlUnauthenticated();
          setResult({ errors: [known] });
        },
      );
    },
  };
}
