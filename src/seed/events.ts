// Demo engagement history for the demo account: end users on several domains playing flows (with
// drop-off along their steps, exits, failures, feedback with comments), searching (with and
// without results, clicked or not), seeing popups, Smart Tips and beacons, and reporting user
// actions over the last 28 days. Made from a seeded random generator: the same seed gives the same
// history relative to the day it is seeded, so every report has rows in its default window.
import { clock } from "../clock.js";
import { prisma, withTransaction } from "../db/index.js";
import { recordEvents } from "../domains/events/schema.js";
import { WIDGETS } from "../domains/events/validate.js";
import type { Progress } from "./progress.js";
import { seeded } from "./random.js";

const DOMAINS = ["app.acme.com", "app.acme.com", "admin.acme.com", "help.acme.com", undefined] as const;
const FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Ken", "Linus", "Margaret", "Dennis", "Radia", "Tim", "Frances"];
const LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Thompson", "Torvalds", "Hamilton", "Ritchie", "Perlman", "Berners-Lee", "Allen"];
const TERMS = ["invoice", "Export report", "reset password", "SSO", "invite user", "refund", "dark mode", "API key", "billing address", "delete account"];
const NO_RESULT_TERMS = ["quantum ledger", "holiday calendar", "fax"];
const GOOD = ["Clear and quick, thanks!", "Exactly what I needed.", "Great walkthrough"];
const BAD = ["Step 3 did not match my screen", "Too long", "The button moved, flow got stuck", 'Confusing "Save" vs "Apply"'];
const ACTIONS = ["export_csv", "create_invoice", "invite_teammate", "connect_crm", "upgrade_plan"];
const STEPS = 5;
const DAY = 86_400_000;

type Ev = Record<string, unknown> & { type: string; time: number };

export async function seedDemoEvents(accountId: string, opts: { sessions?: number; progress?: Progress } = {}): Promise<number> {
  if ((await prisma.event.count({ where: { accountId } })) > 0) return 0; // seeded before
  const progress = opts.progress ?? (() => {});
  const { next: random, pick, chance } = seeded(2024);

  const content = await prisma.content.findMany({ where: { accountId }, select: { id: true, type: true }, orderBy: { createdAt: "asc" } });
  const flows = content
    .filter((c) => c.type === "flow")
    .slice(0, 8)
    .map((c) => c.id);
  const docs = content.filter((c) => ["link", "video", "text"].includes(c.type)).map((c) => c.id);
  const widgets = content.filter((c) => c.type === "widget").map((c) => c.id);
  if (!flows.length) flows.push("flow-onboarding");
  if (!docs.length) docs.push("doc-1");
  if (!widgets.length) widgets.push("widget-1");
  const popups = widgets.slice(0, 4);
  const tips = widgets.slice(4, 8).length ? widgets.slice(4, 8) : widgets;
  const beacons = widgets.slice(8, 11).length ? widgets.slice(8, 11) : widgets;

  const users = Array.from({ length: 300 }, (_, i) => ({
    id: `user-${String(i + 1).padStart(3, "0")}`,
    name: i % 6 === 5 ? undefined : `${pick(FIRST)} ${pick(LAST)}`,
    domain: pick(DOMAINS),
  }));
  // The 28 days up to an hour ago, so even a fresh server's default 30-day window holds them all.
  const end = clock.now().getTime() - 3_600_000;
  const start = end - 28 * DAY;

  const sessions = opts.sessions ?? 6_000;
  const events: Ev[] = [];
  for (let s = 0; s < sessions; s++) {
    const u = pick(users);
    let t = Math.floor(start + random() * (end - start - 600_000));
    const at = () => (t += 1_000 + Math.floor(random() * 30_000));
    const base = { endUserId: u.id, ...(u.domain ? { domain: u.domain } : {}), ...(u.name && chance(0.3) ? { userName: u.name } : {}) };
    const e = (type: string, fields: Record<string, unknown> = {}) => events.push({ type, time: at(), ...base, ...fields });
    const activity = random();
    if (activity < 0.35) {
      // A flow play, dropping off along its steps.
      const flowId = pick(flows);
      const widget = pick(WIDGETS);
      const popup = widget === "guided_popup" ? pick(popups) : undefined;
      if (popup) e("guided_popup_shown", { contentId: popup });
      e("flow_started", { flowId, widget, ...(popup ? { contentId: popup } : {}) });
      let step = 0;
      while (step < STEPS && chance(step === 0 ? 0.95 : 0.82)) e("flow_step", { flowId, step: ++step });
      if (step === STEPS && chance(0.9)) {
        e("flow_completed", { flowId, widget });
        if (chance(0.5)) {
          const useful = chance(0.75);
          e("flow_feedback", { flowId, useful, ...(chance(0.4) ? { comment: pick(useful ? GOOD : BAD) } : {}) });
        }
      } else if (chance(0.8)) e("flow_exited", { flowId, widget });
      else e("flow_failed", { flowId, widget });
    } else if (activity < 0.6) {
      // Self Help: searches with and without results, some clicked, the clicked content viewed.
      const none = chance(0.15);
      const searchTerm = none ? pick(NO_RESULT_TERMS) : pick(TERMS);
      const resultCount = none ? 0 : 1 + Math.floor(random() * 9);
      const clicked = !none && chance(0.55) ? pick(docs) : undefined;
      e("selfhelp_search", { searchTerm, resultCount, ...(clicked ? { contentId: clicked } : {}) });
      if (clicked) e("selfhelp_content_viewed", { contentId: clicked });
    } else if (activity < 0.68) {
      const flowId = pick(flows);
      e("task_started", { flowId });
      if (chance(0.6)) e("task_completed", { flowId });
    } else if (activity < 0.78) {
      const contentId = pick(popups);
      if (chance(0.5)) {
        e("popup_shown", { contentId });
        if (chance(0.3)) e("popup_clicked", { contentId });
      } else e("smart_popup_shown", { contentId });
    } else if (activity < 0.86) {
      const contentId = pick(tips);
      e("smarttip_shown", { contentId });
      if (chance(0.45)) e("smarttip_played", { contentId });
    } else if (activity < 0.93) {
      const contentId = pick(beacons);
      e("beacon_shown", { contentId });
      if (chance(0.3)) e("beacon_clicked", { contentId });
    } else {
      e("user_action", { actionId: pick(ACTIONS) });
    }
  }
  events.sort((x, y) => x.time - y.time);
  const BATCH = 5_000;
  // All or nothing (the batches join one transaction): a seed interrupted here leaves no events,
  // and the next one writes them all.
  return withTransaction(
    async (tx) => {
      if (await tx.event.count({ where: { accountId } })) return 0; // seeded meanwhile
      for (let i = 0; i < events.length; i += BATCH) {
        await recordEvents(accountId, events.slice(i, i + BATCH));
        progress("events", Math.min(i + BATCH, events.length), events.length);
      }
      return events.length;
    },
    { timeout: 600_000, maxWait: 10_000 },
  );
}
