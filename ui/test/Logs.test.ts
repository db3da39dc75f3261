import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import Logs from '../src/screens/Logs.svelte';
import { createApi } from '../src/lib/api';
import { fetchRoutes } from './fetchRoutes';
import { until } from './helpers';

const line = (level: string, message: string) => ({
  time: '2026-12-03T09:00:00Z',
  level,
  target: 'metaclaw_engine::proxy',
  message,
  text: `2026-12-03T09:00:00Z ${level} metaclaw_engine::proxy: ${message}`,
});

describe('Logs', () => {
  it('asks for the chosen level, filters by text here, and colours by level', async () => {
    const { fetch, calls } = fetchRoutes({
      'GET /api/logs': (c: { query: URLSearchParams }) => ({
        file: 'metaclaw.2026-12-03.log',
        lines:
          c.query.get('level') === 'error'
            ? [line('ERROR', 'upstream refused the key')]
            : [line('INFO', 'turn recorded'), line('WARN', 'slow upstream'), line('ERROR', 'upstream refused the key')],
      }),
    });
    render(Logs, { api: createApi({ token: () => 't', fetch }) });
    const log = await screen.findByRole('log', { name: 'Log lines' });
    await until(() => expect(log.children.length).toBe(3));
    expect(calls[0].query.get('level')).toBe('info');
    expect(calls[0].query.get('lines')).toBe('200');
    // Newest last, as the API sends them.
    expect(log.lastElementChild?.textContent).toContain('upstream refused the key');
    expect(log.lastElementChild?.className).toContain('error');

    await fireEvent.change(screen.getByLabelText('Level'), { target: { value: 'error' } });
    await until(() => expect(calls[calls.length - 1].query.get('level')).toBe('error'));
    await until(() => expect(log.children.length).toBe(1));

    await fireEvent.change(screen.getByLabelText('Level'), { target: { value: 'debug' } });
    await until(() => expect(log.children.length).toBe(3));
    await fireEvent.input(screen.getByLabelText('Filter'), { target: { value: 'SLOW' } });
    expect(log.children.length).toBe(1);
    expect(log.textContent).toContain('slow upstream');
    expect(log.textContent).not.toContain('turn recorded');
  });

  it('refreshes every interval while Follow is on, and stops when it is off', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const { fetch, calls } = fetchRoutes({ 'GET /api/logs': { file: null, lines: [] } });
      render(Logs, { api: createApi({ token: () => 't', fetch }), every: 2000 });
      await until(() => expect(calls.length).toBe(1));
      vi.advanceTimersByTime(4000);
      expect(calls.length).toBe(1);
      await fireEvent.click(screen.getByRole('checkbox', { name: 'Follow' }));
      vi.advanceTimersByTime(2000);
      await until(() => expect(calls.length).toBe(2));
      vi.advanceTimersByTime(2000);
      await until(() => expect(calls.length).toBe(3));
      await fireEvent.click(screen.getByRole('checkbox', { name: 'Follow' }));
      vi.advanceTimersByTime(6000);
      expect(calls.length).toBe(3);
    } finally {
      vi.useRealTimers();
    }
  });
});
