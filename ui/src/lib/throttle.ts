// At most one call per `ms`; calls in between fold into one later call so the last change
// is never lost. `settle` delays even the first call a little: an engine event can arrive
// before what it announces is readable (a turn is written to the database just after).

export function throttle(
  fn: () => void,
  ms: number,
  settle = 0,
  now: () => number = Date.now,
): { (): void; cancel(): void } {
  let last = -Infinity;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const run = () => {
    timer = null;
    last = now();
    fn();
  };
  const call = () => {
    if (timer !== null) return;
    const wait = Math.max(settle, last + ms - now());
    if (wait <= 0) run();
    else timer = setTimeout(run, wait);
  };
  call.cancel = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  return call;
}
