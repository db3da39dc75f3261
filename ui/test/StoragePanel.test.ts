import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import StoragePanel from '../src/components/StoragePanel.svelte';
import { ApiError } from '../src/lib/api';
import { lastRunWords, retentionWords, size } from '../src/lib/storage';
import { fakeApi, until } from './helpers';
import { NOW, run, storage } from './storageData';

const rows = (table: HTMLElement) => [...table.querySelectorAll('tbody tr')].map((r) => [...r.children].map((c) => c.textContent));

describe('StoragePanel', () => {
  it('says the size, what takes it, the retention in force and the last run', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW);
    try {
      render(StoragePanel, { api: fakeApi({ 'GET /api/storage': storage() }) });
      await until(() => screen.getByTestId('storage-size'));
      expect(screen.getByTestId('storage-size').textContent).toBe('The database takes 122.0 MB: 48000 turns, 46800 with their messages.');
      expect(rows(screen.getByRole('table', { name: 'What takes the space' }))).toEqual([
        ['conversations', '98.0 MB'],
        ['memories', '14.2 MB'],
        ['embeddings', '8.0 MB'],
        ['other', '1.3 MB'],
      ]);
      expect(screen.getByTestId('storage-retention').textContent).toBe(
        'Retention: messages kept 90 days, no size limit; figures, skills and memories kept for ever. Change it in Settings.',
      );
      expect(screen.getByTestId('storage-last-run').textContent).toBe(
        "Last run 2 h ago (while quiet): 1200 turns' messages dropped, 38.5 MB given back.",
      );
    } finally {
      vi.useRealTimers();
    }
  });

  it('applies the retention when asked and shows what changed; a failure is said, not hidden', async () => {
    let asked = 0;
    const api = fakeApi({
      'GET /api/storage': () => (asked === 0 ? storage({ last_run: null }) : storage({ last_run: run({ trigger: 'asked', at_ms: Date.now() }) })),
      'POST /api/storage/retention': () => {
        asked++;
        return asked === 1 ? run({ trigger: 'asked' }) : new ApiError(500, 'database is locked');
      },
    });
    render(StoragePanel, { api });
    await until(() => expect(screen.getByTestId('storage-last-run').textContent).toMatch(/^Retention has not run yet/));
    await fireEvent.click(screen.getByRole('button', { name: 'Apply retention now' }));
    await until(() => expect(screen.getByTestId('storage-last-run').textContent).toMatch(/^Last run just now \(when asked\): 1200 turns/));
    expect(api.calls.map((c) => `${c.method} ${c.path}`)).toEqual(['GET /api/storage', 'POST /api/storage/retention', 'GET /api/storage']);
    await fireEvent.click(screen.getByRole('button', { name: 'Apply retention now' }));
    await until(() => screen.getByText('database is locked'));
  });

  it('words sizes, settings and unfinished runs as the command line does', () => {
    expect(size(999)).toBe('999 B');
    expect(size(1_234_567)).toBe('1.2 MB');
    expect(size(1_200_000_000)).toBe('1.2 GB');
    expect(retentionWords({ keep_turn_bodies_days: 0, max_db_mb: 500 })).toBe(
      'messages kept forever, at most 500 MB; figures, skills and memories kept for ever',
    );
    expect(lastRunWords(run({ finished: false, at_ms: NOW - 3 * 86_400_000 }), NOW)).toBe(
      "Last run 3 days ago (while quiet): 1200 turns' messages dropped, 38.5 MB given back. It stopped for a request and goes on at the next quiet moment.",
    );
    expect(lastRunWords(run({ over_limit: '60 MB are in use', at_ms: NOW }), NOW)).toMatch(/Still over the limit: 60 MB are in use\.$/);
  });
});
