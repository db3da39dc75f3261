import { describe, expect, it, vi } from 'vitest';
import { render, screen } from '@testing-library/svelte';
import { tick } from 'svelte';
import Dashboard from '../src/screens/Dashboard.svelte';
import type { SseEvent } from '../src/lib/sse';
import { throttle } from '../src/lib/throttle';
import { fakeApi, until } from './helpers';
import { STATUS } from './setupData';
import { learning } from './learningData';
import { costReport } from './costData';
import { effectReport, outcome } from './effectData';
import { CONNECTED, SCANNING, wechat } from './wechatData';
import { storage } from './storageData';

const T0 = 1_764_720_000_000;
// The dashboard's own interval between reloads.
const THROTTLE_MS = 2000;
const series = (count: number) => ({
  from_ms: T0,
  to_ms: T0 + 3_600_000,
  bucket_ms: 3_600_000,
  requests: [{ t_ms: T0, count, errors: 0, overhead_p50_ms: 0.8, overhead_p95_ms: 1.5 }],
  skills: [{ t_ms: T0, total: 2 }],
  memories: [{ t_ms: T0, total: 7 }],
});

function dashboardApi(count: () => number, extra: Record<string, unknown> = {}) {
  const api = fakeApi({
    'GET /api/stats/series': () => series(count()),
    'GET /api/stats': () => costReport({ turns: count() }),
    'GET /api/effect': () => effectReport({ baseline: outcome({ turns: count(), labelled: 0, corrections: 0, repeats: 0, correction_rate: null }) }),
    'GET /api/status': STATUS,
    'GET /api/scheduler': { state: 'waiting', gate_background_learning: true, running: true, pause_problem: null, text: { state: 'waiting for a window', next_window: '' } },
    'GET /api/learning': learning({ active: false, mode: 'skills_only', state: 'off' }),
    'GET /api/wechat': wechat({ enabled: false, installed: false, state: 'off', line: 'WeChat is off.' }),
    'GET /api/storage': storage(),
    ...extra,
  });
  const pushers: Record<string, (e: SseEvent) => void> = {};
  api.stream = vi.fn((path: string, on: (e: SseEvent) => void, signal: AbortSignal) => {
    pushers[path] = on;
    return new Promise<void>((r) => signal.addEventListener('abort', () => r()));
  });
  return { api, pushers };
}

describe('Dashboard', () => {
  it('shows the series and the cost as text, and reloads them and the status on engine events', async () => {
    // The clock is the test's: the status panel's poll never runs, and the throttle's interval
    // ends when the test moves the clock, however slowly the machine runs the test.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    try {
      let count = 12;
      const { api, pushers } = dashboardApi(() => count);
      render(Dashboard, { api, throttleMs: THROTTLE_MS });

      // `until`, not findBy*: it waits in real time while the fake clock stands still.
      await until(() => screen.getByText('12 requests in the last 24 hours, median overhead 0.8 ms'));
      expect(screen.getByText('Skills: 2; memories: 7 over the last 24 hours')).toBeTruthy();
      const seriesCall = api.calls.find((c) => c.path === '/api/stats/series');
      expect(seriesCall?.params).toEqual({ hours: 24, buckets: 24 });
      await until(() => screen.getByText(/^12 turns in the last 24 hours: /));
      await until(() => expect(pushers['/api/events']).toBeTruthy());

      const loads = (path: string) => api.calls.filter((c) => c.path === path).length;
      const before = { series: loads('/api/stats/series'), status: loads('/api/status'), cost: loads('/api/stats') };
      count = 13;
      // The first event reloads at once.
      pushers['/api/events']({ event: 'turn', data: '{"at_ms":1,"model":"m","status":200,"overhead_ms":0.7}' });
      await until(() => screen.getByText('13 requests in the last 24 hours, median overhead 0.8 ms'));
      await until(() => expect(loads('/api/status')).toBe(before.status + 1));
      await until(() => screen.getByText(/^13 turns in the last 24 hours: /));
      expect(loads('/api/stats')).toBe(before.cost + 1);
      expect(loads('/api/stats/series')).toBe(before.series + 1);
      // The Effect panel follows the same events.
      await until(() => screen.getByText('13 main turns; the user has not followed up on any answer yet.'));
      expect(screen.queryByRole('alert')).toBeNull();

      // A burst within the interval folds into one reload at its end, whatever its size.
      const mid = loads('/api/stats/series');
      for (let i = 0; i < 5; i++) pushers['/api/events']({ event: 'memory_changed', data: '{}' });
      await tick();
      expect(loads('/api/stats/series')).toBe(mid);
      vi.advanceTimersByTime(THROTTLE_MS - 1);
      await tick();
      expect(loads('/api/stats/series')).toBe(mid);
      vi.advanceTimersByTime(1);
      await until(() => expect(loads('/api/stats/series')).toBe(mid + 1));
      // Nothing else was pending.
      vi.advanceTimersByTime(10 * THROTTLE_MS);
      await tick();
      expect(loads('/api/stats/series')).toBe(mid + 1);

      // After a quiet interval, the first event of a burst reloads at once and the rest fold
      // into one reload an interval later.
      for (let i = 0; i < 5; i++) pushers['/api/events']({ event: 'skills_learned', data: '{}' });
      await until(() => expect(loads('/api/stats/series')).toBe(mid + 2));
      vi.advanceTimersByTime(THROTTLE_MS);
      await until(() => expect(loads('/api/stats/series')).toBe(mid + 3));
      vi.advanceTimersByTime(10 * THROTTLE_MS);
      await tick();
      expect(loads('/api/stats/series')).toBe(mid + 3);

      // Events that do not change the numbers are ignored.
      pushers['/api/events']({ event: 'upstream_auth_failed', data: '{"upstream":"openai","status":401}' });
      vi.advanceTimersByTime(10 * THROTTLE_MS);
      await tick();
      expect(loads('/api/stats/series')).toBe(mid + 3);
      expect((await until(() => screen.getByText(/refused MetaClaw's API key \(HTTP 401\)/))).textContent).toContain('openai');
      expect(screen.getByRole('link', { name: 'Open setup' }).getAttribute('href')).toBe('#/setup');
      pushers['/api/events']({ event: 'started', data: '{"addr":"127.0.0.1:30000"}' });
      await until(() => expect(screen.queryByText(/refused MetaClaw's API key/)).toBeNull());
    } finally {
      vi.useRealTimers();
    }
  });

  it('puts the WeChat panel first while its QR code awaits a scan, and back among the panels after', async () => {
    // The status panel's poll never runs: only events reload here.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      let state = SCANNING;
      const { api, pushers } = dashboardApi(() => 1, { 'GET /api/wechat': () => state });
      // No fast polling here: only events reload the panel.
      render(Dashboard, { api, throttleMs: 20, wechatPollMs: 60_000 });

      const img = await screen.findByRole('img', { name: 'WeChat login QR code' });
      const heading = screen.getByRole('heading', { level: 1 });
      const scheduler = screen.getByRole('heading', { name: 'Training window' });
      const follows = (a: Node, b: Node) => Boolean(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
      // Right under the title, before the notice line and every other panel.
      expect(follows(heading, img)).toBe(true);
      expect(follows(img, screen.getByRole('status'))).toBe(true);
      expect(follows(img, scheduler)).toBe(true);

      state = CONNECTED;
      await until(() => expect(pushers['/api/events']).toBeTruthy());
      const asked = () => api.calls.filter((c) => c.path === '/api/wechat').length;
      const before = asked();
      // Other events leave the panel alone; the engine's `wechat` event reloads it at once.
      pushers['/api/events']({ event: 'turn', data: '{}' });
      await until(() => expect(api.calls.filter((c) => c.path === '/api/status').length).toBe(2));
      expect(asked()).toBe(before);
      pushers['/api/events']({ event: 'wechat', data: '{"kind":"wechat","state":"connected","line":"WeChat is connected.","qr":null}' });
      const line = await screen.findByText('WeChat is connected.');
      expect(screen.queryByRole('img', { name: 'WeChat login QR code' })).toBeNull();
      expect(follows(scheduler, line)).toBe(true);
      expect(follows(line, screen.getByRole('heading', { name: 'Status' }))).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('throttle', () => {
  it('runs at once, then folds calls within the interval into one trailing call', () => {
    vi.useFakeTimers();
    try {
      let now = 0;
      const fn = vi.fn();
      const t = throttle(fn, 2000, () => now);
      t();
      expect(fn).toHaveBeenCalledTimes(1);
      now = 500;
      t();
      t();
      expect(fn).toHaveBeenCalledTimes(1);
      now = 2000;
      vi.advanceTimersByTime(1500);
      expect(fn).toHaveBeenCalledTimes(2);
      now = 5000;
      t();
      expect(fn).toHaveBeenCalledTimes(3);
    } finally {
      vi.useRealTimers();
    }
  });
});
