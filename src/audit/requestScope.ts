// Who is acting, carried through async calls: set per HTTP request by the app (and per command by
// the CLI), filled in with the caller's identity once authentication resolves. The audit recorder
// reads it, so no resolver has to pass the actor along.
import { AsyncLocalStorage } from "node:async_hooks";

export interface RequestScope {
  requestId: string | null;
  ip: string | null;
  /** e-mail of the authenticated user, `cli:<user>` for the admin CLI, `system` otherwise */
  actor: string | null;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();

export function currentScope(): RequestScope | undefined {
  return requestScope.getStore();
}
