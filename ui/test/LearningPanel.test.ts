import { describe, expect, it, vi } from 'vitest';
import { render, screen } from '@testing-library/svelte';
import LearningPanel from '../src/components/LearningPanel.svelte';
import Dashboard from '../src/screens/Dashboard.svelte';
import { ApiError } from '../src/lib/api';
import type { SseEvent } from '../src/lib/sse';
import type { Learning } from '../src/lib/types';
import { fakeApi, until } from './helpers';
import { learning, step } from './learningData';
import { STATUS } from './setupData';

describe('LearningPanel', () => {
  it('shows only the off line when weight learning is off', async () => {
    const api = fakeApi({ 'GET /api/learning': learning({ mode: 'skills_only', active: false, backend: null, state: 'off', steps: [step(1, 0.2)] }) });
    const { container } = render(LearningPanel, { api });

    expect(await screen.findByText('Weight learning is off (mode skills_only). Switch to rl or madmax in Settings.')).toBeTruthy();
    const section = container.querySelector('section');
    expect([...(section?.children ?? [])].map((e) => e.tagName)).toEqual(['H2', 'P']);
    expect(screen.queryByText(/Samples waiting/)).toBeNull();
  });

  it('shows state, error, counts and the waiting samples before the first step', async () => {
    const api = fakeApi({ 'GET /api/learning': learning({ last_error: 'sampler refused the request (HTTP 503)' }) });
    render(LearningPanel, { api });

    expect(await screen.findByText('Backend tinker (ready) · model Qwen/Qwen3-4B · serving the base model · idle')).toBeTruthy();
    const err = screen.getByText('Last error: sampler refused the request (HTTP 503)');
    expect(err.classList.contains('error')).toBe(true);
    expect(screen.getByText('Judge backlog').nextElementSibling?.textContent).toBe('2');
    expect(screen.getByText('Served by the trained model').nextElementSibling?.textContent).toBe('40');
    expect(screen.getByText('No training step yet — 5 samples waiting (batch size decides when)')).toBeTruthy();
    expect(screen.queryByText('Show the steps')).toBeNull();
  });

  it('summarises the steps and lists them in a table', async () => {
    const steps = [step(1, 0.1, 1.5), step(2, 0.3, null), step(3, 0.6, 0.9)];
    steps[1].error = 'optim_step timed out';
    const api = fakeApi({ 'GET /api/learning': learning({ step: 3, training: true, steps }) });
    render(LearningPanel, { api });

    expect(await screen.findByText('Mean reward rose from 0.10 at step 1 to 0.60 at step 3')).toBeTruthy();
    expect(screen.getByText('Loss fell from 1.50 at step 1 to 0.90 at step 3')).toBeTruthy();
    expect(screen.getByText(/training step 4 now$/)).toBeTruthy();
    const rows = [...screen.getByRole('table').querySelectorAll('tbody tr')].map((r) =>
      [...r.querySelectorAll('td')].filter((_, i) => i !== 1).map((td) => td.textContent),
    );
    expect(rows).toEqual([
      ['1', '4', '0', '0.10', '1.50', '0.8 s', ''],
      ['2', '4', '0', '0.30', '—', '0.8 s', 'optim_step timed out'],
      ['3', '4', '0', '0.60', '0.90', '0.8 s', ''],
    ]);
  });

  it('polls while learning is active, so a step starting shows without an event', async () => {
    let current: Learning = learning({ step: 2 });
    const api = fakeApi({ 'GET /api/learning': () => current });
    render(LearningPanel, { api, every: 20 });

    expect(await screen.findByText(/idle after step 2$/)).toBeTruthy();
    current = learning({ step: 2, training: true });
    expect(await screen.findByText(/training step 3 now$/)).toBeTruthy();
  });

  it('says a failed load as an error', async () => {
    const api = fakeApi({ 'GET /api/learning': () => new ApiError(500, 'The learning state could not be read.') });
    render(LearningPanel, { api });
    expect((await screen.findByRole('alert')).textContent).toBe('The learning state could not be read.');
  });

  it('reloads on the Dashboard when a training step finishes', async () => {
    // The panels' own polls (every 5 s while learning is active) never run here: only events
    // reload, however long the test takes on a busy machine.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      let current: Learning = learning();
      const api = fakeApi({
        'GET /api/learning': () => current,
        'GET /api/stats/series': { from_ms: 0, to_ms: 1, bucket_ms: 1, requests: [], skills: [], memories: [] },
        'GET /api/status': STATUS,
        'GET /api/scheduler': { state: 'waiting', gate_background_learning: true, running: true, pause_problem: null, text: { state: 'waiting for a window', next_window: '' } },
      });
      let push: (e: SseEvent) => void = () => {};
      api.stream = vi.fn((path: string, on: (e: SseEvent) => void, signal: AbortSignal) => {
        if (path === '/api/events') push = on;
        return new Promise<void>((r) => signal.addEventListener('abort', () => r()));
      });
      render(Dashboard, { api, throttleMs: 20 });

      expect(await screen.findByText(/No training step yet — 5 samples waiting/)).toBeTruthy();
      await until(() => expect(api.stream).toHaveBeenCalledWith('/api/events', expect.any(Function), expect.any(AbortSignal)));
      const loads = () => api.calls.filter((c) => c.path === '/api/learning').length;
      const before = loads();

      current = learning({ step: 1, samples: { waiting: 0, unjudged: 0, held: 0, consumed: 4, dropped: 0 }, steps: [step(1, 0.4, 1.1)] });
      push({ event: 'training_finished', data: '{"step":1,"reward":0.4}' });
      expect(await screen.findByText('Mean reward 0.40 at step 1')).toBeTruthy();
      expect(screen.getByText(/idle after step 1$/)).toBeTruthy();
      expect(loads()).toBe(before + 1);

      // A turn reloads the activity panels, not this one.
      push({ event: 'turn', data: '{"at_ms":1,"model":"m","status":200,"overhead_ms":0.7}' });
      await until(() => expect(api.calls.filter((c) => c.path === '/api/status').length).toBeGreaterThan(1));
      expect(loads()).toBe(before + 1);
    } finally {
      vi.useRealTimers();
    }
  });
});
