// The server's public base URL (PUBLIC_URL, e.g. https://api.example.com), when the operator sets
// one: the service cannot know it from inside (proxies, TLS termination), and absolute URLs in
// answers (file `url`s, the OpenAPI document's servers and contact) must not be guessed from a
// request's Host header, which a caller controls. Unset: those URLs stay relative paths.
let base = "";

export function configurePublicUrl(url: string | undefined): void {
  base = (url ?? "").replace(/\/+$/, "");
}

/** The public base URL without a trailing slash, or undefined when none is configured. */
export function publicBaseUrl(): string | undefined {
  return base || undefined;
}

/** `path` (starting with `/`) as an absolute URL when PUBLIC_URL is set, else as it is. */
export function publicUrl(path: string): string {
  return base + path;
}
