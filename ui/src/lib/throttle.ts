// At most one call per `ms`; calls in between fold into one later call so the last change
// is never lost.

export function throttle(
  fn: () => void,
  ms: number,
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
    const wait = last + ms - now();
    if (wait <= 0) run();
    else timer = setTimeout(run, wait);
  };
  call.cancel = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  return call;
}
