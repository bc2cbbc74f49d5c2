// GraphiQL with its assets inlined (@graphql-yoga/render-graphiql) instead of Yoga's default page,
// which loads GraphiQL from a CDN: the page must work on machines without internet access.
import { renderGraphiQL } from "@graphql-yoga/render-graphiql";

type Options = Parameters<typeof renderGraphiQL>[0];
const pages = new Map<string, string>();

/** The page is ~9 MB of inlined JavaScript; build it once per set of options, not per request. */
export function renderLocalGraphiQL(opts?: Options): string {
  const key = JSON.stringify(opts ?? {});
  let page = pages.get(key);
  if (page === undefined) {
    page = renderGraphiQL(opts);
    pages.set(key, page);
  }
  return page;
}
