// GraphiQL with its assets inlined (@graphql-yoga/render-graphiql) instead of Yoga's default page,
// which loads GraphiQL from a CDN: the page must work on machines without internet access.
import type { renderGraphiQL } from "@graphql-yoga/render-graphiql";

type Options = Parameters<typeof renderGraphiQL>[0];
const pages = new Map<string, Promise<string>>();

/**
 * The page is ~9 MB of inlined JavaScript. The module holding it is imported on the first page
 * request, not at start (importing it costs ~32 MB of heap, ~40 MB RSS, in every process, most of
 * which never serve the page); each page is then built once per set of options, not per request.
 */
export function renderLocalGraphiQL(opts?: Options): Promise<string> {
  const key = JSON.stringify(opts ?? {});
  let page = pages.get(key);
  if (page === undefined) {
    page = import("@graphql-yoga/render-graphiql").then((m) => m.renderGraphiQL(opts));
    pages.set(key, page);
  }
  return page;
}
