// Tables keyed by what clients send (event types, id types, media types, dimension names, body
// fields) are read through ownEntry: a plain object also answers `constructor`, `toString` or
// `__proto__`, from Object.prototype. An event of type "toString" passed the type check that way,
// and its "required fields" (a function) then failed the whole request with a 500.
export function ownEntry<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
