// `/api/storage`: the database on disk, what takes the space, the retention and its last run.

export interface DroppedStats {
  turns: number;
  parts: number;
  bytes: number;
}

export interface RetentionRun {
  at_ms: number;
  trigger: 'idle' | 'asked';
  by_age: DroppedStats;
  by_size: DroppedStats;
  given_back_bytes: number;
  rewrote: boolean;
  file_bytes_before: number;
  file_bytes_after: number;
  finished: boolean;
  over_limit: string | null;
  duration_ms: number;
  error: string | null;
}

export interface StorageReport {
  path: string;
  space: {
    file_bytes: number;
    wal_bytes: number;
    free_bytes: number;
    parts: { what: string; bytes: number }[];
    incremental_vacuum: boolean;
  };
  bodies: { turns: number; with_bodies: number; oldest_with_body_ms: number | null };
  retention: { keep_turn_bodies_days: number; max_db_mb: number };
  last_run: RetentionRun | null;
  running: boolean;
  measured_at_ms: number;
}

/** Bytes as people read them (powers of 1,000, as `metaclaw storage` prints them). */
export function size(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = bytes / 1000;
  let unit = 0;
  while (v >= 1000 && unit + 1 < units.length) {
    v /= 1000;
    unit++;
  }
  return `${v.toFixed(1)} ${units[unit]}`;
}

/** The settings in words, as the CLI says them. */
export function retentionWords(r: StorageReport['retention']): string {
  const days = r.keep_turn_bodies_days;
  const age = days === 0 ? 'messages kept forever' : `messages kept ${days} ${days === 1 ? 'day' : 'days'}`;
  const cap = r.max_db_mb === 0 ? 'no size limit' : `at most ${r.max_db_mb} MB`;
  return `${age}, ${cap}; figures, skills and memories kept for ever`;
}

/** The last run in a sentence; `now` in Unix ms. */
export function lastRunWords(run: RetentionRun | null, now: number): string {
  if (!run) return 'Retention has not run yet: it runs when MetaClaw has been quiet for 5 minutes, every 6 hours at most.';
  const dropped = run.by_age.turns + run.by_size.turns;
  const why = run.trigger === 'asked' ? 'when asked' : 'while quiet';
  let text = `Last run ${ago(now, run.at_ms)} (${why}): ${dropped} turns' messages dropped, ${size(run.given_back_bytes)} given back.`;
  if (run.error) text += ` It failed part way: ${run.error}`;
  else if (!run.finished) text += ' It stopped for a request and goes on at the next quiet moment.';
  if (run.over_limit) text += ` Still over the limit: ${run.over_limit}.`;
  return text;
}

function ago(now: number, at: number): string {
  const mins = Math.max(0, Math.floor((now - at) / 60000));
  if (mins === 0) return 'just now';
  if (mins < 60) return `${mins} min ago`;
  if (mins < 48 * 60) return `${Math.floor(mins / 60)} h ago`;
  return `${Math.floor(mins / (24 * 60))} days ago`;
}
