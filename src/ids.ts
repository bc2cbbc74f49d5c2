// Ids that sort by creation time (then by a per-process sequence), so that rows created by one bulk
// request list in request order under the (createdAt, id) keyset order.
import { randomBytes } from "node:crypto";

let lastMs = 0;
let seq = 0;

export function newId(prefix: string): string {
  const now = Date.now();
  if (now === lastMs) seq++;
  else {
    lastMs = now;
    seq = 0;
  }
  return `${prefix}_${now.toString(36).padStart(9, "0")}${seq.toString(36).padStart(4, "0")}${randomBytes(4).toString("hex")}`;
}
