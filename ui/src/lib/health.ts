// The status panel's words for what went wrong out of sight: lost recordings, failing
// learning, the database, and what learning calls cost. Same wording as `metaclaw status`.

import type { CallCounts, Health, LearningCalls } from './types';

/** "5m ago" / "in 30s" relative to `now`. */
export function relative(atMs: number, now: number): string {
  const future = atMs >= now;
  const secs = Math.floor(Math.abs(atMs - now) / 1000);
  const span =
    secs < 60 ? `${secs}s` : secs < 3600 ? `${Math.floor(secs / 60)}m` : secs < 86_400 ? `${Math.floor(secs / 3600)}h ${Math.floor((secs % 3600) / 60)}m` : `${Math.floor(secs / 86_400)}d`;
  return future ? `in ${span}` : `${span} ago`;
}

const when = (at: number | null, now: number) => (at ? ` (${relative(at, now)})` : '');
const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);

/** One line per cause of lost recordings; empty when nothing was lost. */
export function recorderLines(h: Health, now: number): string[] {
  const r = h.recorder;
  const out: string[] = [];
  if (r.dropped_queue_full > 0) out.push(`${r.dropped_queue_full} turns dropped: recorder queue full${when(r.last_dropped_at_ms, now)}`);
  if (r.failed_writes > 0) out.push(`${r.failed_writes} turns not recorded: ${r.last_write_error ?? 'write failed'}${when(r.last_write_error_at_ms, now)}`);
  return out;
}

/** One line per learning job that failed since the engine started. */
export function learningLines(h: Health, now: number): string[] {
  return h.learning.map((j) => {
    const last = j.last_error_at_ms ? `, last ${relative(j.last_error_at_ms, now)}` : '';
    let line = `${j.job.split('_').join(' ')} failing: ${j.failures} failed ${plural(j.failures, 'attempt', 'attempts')}${last}: ${j.last_error ?? 'unknown error'}`;
    if (j.backing_off_until_ms) line += `; next try ${relative(j.backing_off_until_ms, now)}`;
    if (j.given_up > 0) line += `; ${j.given_up} ${plural(j.given_up, 'stretch', 'stretches')} of turns given up on`;
    return line;
  });
}

function counts(c: CallCounts): string {
  const failed = c.failed > 0 ? `, ${c.failed} failed` : '';
  return `${c.calls} ${plural(c.calls, 'call', 'calls')} (${c.input_tokens} tokens in, ${c.output_tokens} out${failed})`;
}

export function callsLine(c: LearningCalls): string {
  return `${counts(c.since_start)} since start, ${counts(c.today)} today (UTC)`;
}
