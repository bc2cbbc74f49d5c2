// The service's notion of "now", in one place so tests can fix it (audit-log windows, reports).
export const clock = {
  now: (): Date => new Date(),
};
