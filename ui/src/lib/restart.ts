// Restarting the engine from the UI: ask, then wait until `/api/status` answers again from
// the new run (bounded).

import type { Api } from './api';
import type { Status } from './types';

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

export const RESTART_TIMEOUT_MS = 30_000;

const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Asks MetaClaw to restart and resolves once the restarted engine answers; throws a
 *  sentence when it has not come back in time. The old run may still answer for a moment,
 *  so an answer counts once the engine was seen down or its uptime went back. */
export async function restartAndWait(api: Api, opts: WaitOptions = {}): Promise<Status> {
  const timeout = opts.timeoutMs ?? RESTART_TIMEOUT_MS;
  const interval = opts.intervalMs ?? 500;
  const sleep = opts.sleep ?? realSleep;
  const now = opts.now ?? Date.now;
  let before: number | null = null;
  try {
    before = (await api.get<Status>('/api/status')).uptime_secs;
  } catch {
    // not answering now: any answer after the restart is the new run
  }
  await api.post('/api/restart');
  const deadline = now() + timeout;
  let sawDown = before === null;
  let last: Status | null = null;
  while (now() < deadline) {
    await sleep(interval);
    try {
      last = await api.get<Status>('/api/status');
      if (sawDown || (before !== null && last.uptime_secs < before)) return last;
    } catch {
      sawDown = true;
    }
  }
  // Still the same uptime but answering: it restarted within the same second.
  if (last) return last;
  throw new Error(`MetaClaw did not answer within ${Math.round(timeout / 1000)} s after the restart. Check the logs, or start it again.`);
}
