import { describe, expect, it, vi } from 'vitest';
import { render, screen } from '@testing-library/svelte';
import StatusPanel from '../src/components/StatusPanel.svelte';
import { relative } from '../src/lib/health';
import { fakeApi } from './helpers';
import { STATUS } from './setupData';

const calls = (n: number, tokensIn: number) => ({ calls: n, failed: 0, input_tokens: tokensIn, output_tokens: 7 });

describe('StatusPanel', () => {
  it('names lost recordings, failing learning and a broken database, and what learning calls cost', async () => {
    // The panel words times relative to its clock: frozen here, so the words do not depend on
    // how long the test took to get from this line to the drawing (10m or 9m, 1m or 2m).
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const now = Date.now();
      const api = fakeApi({
        'GET /api/status': {
          ...STATUS,
          turns_recorded: 14,
          health: {
            database: 'the database file metaclaw.db was deleted while MetaClaw was running; nothing is recorded until it restarts',
            recorder: {
              dropped_queue_full: 2,
              last_dropped_at_ms: now - 120_000,
              failed_writes: 136,
              last_write_error: 'the database refused the write: database or disk is full',
              last_write_error_at_ms: now - 5_000,
              database_problem: null,
            },
            learning: [
              {
                job: 'skill_evolution',
                failures: 4,
                failing_in_a_row: 4,
                last_error: "the evolver's answer was not usable: expected value at line 1 column 1",
                last_error_at_ms: now - 60_000,
                backing_off_until_ms: now + 570_000,
                given_up: 1,
                last_given_up: 'given up',
                last_success_at_ms: null,
              },
            ],
          },
          learning_calls: { since_start: calls(4, 1200), day: '2026-12-03', today: calls(4, 1200), by_purpose: { evolution: calls(4, 1200) } },
        },
      });
      render(StatusPanel, { api, every: 60_000 });

      expect(await screen.findByText('2 turns dropped: recorder queue full (2m ago)')).toBeTruthy();
      expect(screen.getByText(/^136 turns not recorded: the database refused the write: database or disk is full/)).toBeTruthy();
      expect(screen.getByText(/metaclaw.db was deleted while MetaClaw was running/)).toBeTruthy();
      const learning = screen.getByText(/^skill evolution failing: 4 failed attempts, last 1m ago: the evolver's answer was not usable/);
      expect(learning.textContent).toContain('; next try in 9m');
      expect(learning.textContent).toContain('; 1 stretch of turns given up on');
      expect(screen.getAllByRole('alert')).toHaveLength(4);
      expect(screen.getByText('4 calls (1200 tokens in, 7 out) since start, 4 calls (1200 tokens in, 7 out) today (UTC)')).toBeTruthy();
    } finally {
      vi.useRealTimers();
    }
  });

  it('says how skills and memories are found: by words only until the local model is in', async () => {
    const line = 'by words only while the local embedding model paraphrase-multilingual-MiniLM-L12-v2 downloads from https://huggingface.co/x';
    const api = fakeApi({
      'GET /api/status': { ...STATUS, embeddings: { source: 'local', model: '', ready: false, line } },
    });
    render(StatusPanel, { api, every: 60_000 });
    expect((await screen.findByTestId('retrieval')).textContent).toBe(line);
  });

  it('says what learns without a model, and which model learns when there is one', async () => {
    const none = 'skills are not learned (no model); memories read by rules only (no model). A model for learning alone: …';
    const api = fakeApi({ 'GET /api/status': { ...STATUS, learning_model: { evolution: null, extraction: null, line: none } } });
    render(StatusPanel, { api, every: 60_000 });
    const shown = await screen.findByTestId('learning-model');
    expect(shown.textContent).toBe(none);
    expect(shown.classList.contains('problem')).toBe(true);
  });

  it('marks nothing when learning has its model', async () => {
    const line = 'skills learned with gpt-4o-mini; memories read with gpt-4o-mini';
    const api = fakeApi({ 'GET /api/status': { ...STATUS, learning_model: { evolution: 'gpt-4o-mini', extraction: 'gpt-4o-mini', line } } });
    render(StatusPanel, { api, every: 60_000 });
    const shown = await screen.findByTestId('learning-model');
    expect(shown.textContent).toBe(line);
    expect(shown.classList.contains('problem')).toBe(false);
  });

  it('says when a newer version is available, as the engine words it', async () => {
    const line = "MetaClaw 0.2.0 is available (running 0.1.0); to install it: sudo apt upgrade metaclaw";
    const update = { check: 'daily', current: '0.1.0', source: 'apt', from: null, available: '0.2.0', apply: 'sudo apt upgrade metaclaw', error: null, checked_at_ms: 1, restart_to: null, line };
    const api = fakeApi({ 'GET /api/status': { ...STATUS, update } });
    render(StatusPanel, { api, every: 60_000 });
    expect((await screen.findByTestId('update')).textContent).toBe(line);
  });

  it('shows no problem lines for a healthy engine, nor for one without the health section', async () => {
    const api = fakeApi({ 'GET /api/status': STATUS });
    render(StatusPanel, { api, every: 60_000 });
    expect(await screen.findByText('0 turns')).toBeTruthy();
    expect(screen.queryAllByRole('alert')).toHaveLength(0);
  });
});

describe('relative', () => {
  it('words past and future times', () => {
    expect(relative(1_000, 61_000)).toBe('1m ago');
    expect(relative(10_000, 5_000)).toBe('in 5s');
    expect(relative(0, 2 * 86_400_000)).toBe('2d ago');
  });
});
