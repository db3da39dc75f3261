import type { RetentionRun, StorageReport } from '../src/lib/storage';

export const NOW = 1_764_720_000_000;

export function run(over: Partial<RetentionRun> = {}): RetentionRun {
  return {
    at_ms: NOW - 2 * 3_600_000,
    trigger: 'idle',
    by_age: { turns: 1200, parts: 800, bytes: 41_000_000 },
    by_size: { turns: 0, parts: 0, bytes: 0 },
    given_back_bytes: 38_500_000,
    rewrote: false,
    file_bytes_before: 160_000_000,
    file_bytes_after: 121_500_000,
    finished: true,
    over_limit: null,
    duration_ms: 5400,
    error: null,
    ...over,
  };
}

export function storage(over: Partial<StorageReport> = {}): StorageReport {
  return {
    path: '/home/u/.metaclaw/metaclaw.db',
    space: {
      file_bytes: 121_500_000,
      wal_bytes: 500_000,
      free_bytes: 0,
      parts: [
        { what: 'conversations', bytes: 98_000_000 },
        { what: 'memories', bytes: 14_200_000 },
        { what: 'embeddings', bytes: 8_000_000 },
        { what: 'other', bytes: 1_300_000 },
      ],
      incremental_vacuum: true,
    },
    bodies: { turns: 48_000, with_bodies: 46_800, oldest_with_body_ms: NOW - 89 * 86_400_000 },
    retention: { keep_turn_bodies_days: 90, max_db_mb: 0 },
    last_run: run(),
    running: false,
    measured_at_ms: NOW,
    ...over,
  };
}
