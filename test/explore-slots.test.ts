// SQLite's Explore workers (src/domains/explore/run.ts): at most a few questions run at once, a few
// more wait their turn, each at most its own time; past either bound the question is a 503 to retry,
// not a wait without end.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Slots } from "../src/domains/explore/run.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("Slots", () => {
  it("grants up to max at once; one more waits for a release; past maxWaiting one is refused at once", async () => {
    const slots = new Slots(2, 1);
    expect(await slots.acquire(1_000)).toBe(true);
    expect(await slots.acquire(1_000)).toBe(true);
    const third = slots.acquire(1_000);
    expect(slots.queued).toBe(1);
    expect(await slots.acquire(1_000)).toBe(false);
    slots.release();
    expect(await third).toBe(true);
    expect(slots.queued).toBe(0);
  });

  it("a waiter gives up after its time, leaves the queue, and takes no slot", async () => {
    const slots = new Slots(1, 4);
    expect(await slots.acquire(1_000)).toBe(true);
    const late = slots.acquire(500);
    vi.advanceTimersByTime(499);
    expect(slots.queued).toBe(1);
    vi.advanceTimersByTime(1);
    expect(await late).toBe(false);
    expect(slots.queued).toBe(0);
    // The slot's holder releases: nobody waits, and the slot is free for the next question.
    slots.release();
    expect(await slots.acquire(1)).toBe(true);
    expect(slots.queued).toBe(0);
  });

  it("waiters are granted in order of arrival", async () => {
    const slots = new Slots(1, 4);
    await slots.acquire(1_000);
    const order: number[] = [];
    const waiters = [1, 2, 3].map((n) => slots.acquire(1_000).then((ok) => ok && order.push(n)));
    for (let i = 0; i < 3; i++) {
      slots.release();
      await Promise.resolve();
    }
    await Promise.all(waiters);
    expect(order).toEqual([1, 2, 3]);
  });
});
