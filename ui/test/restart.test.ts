import { describe, expect, it } from 'vitest';
import { restartAndWait } from '../src/lib/restart';
import { fakeApi } from './helpers';
import { STATUS } from './setupData';

describe('restartAndWait', () => {
  it('waits past the old run still answering until the uptime goes back', async () => {
    const uptimes = [100, 101, 101, 2];
    const api = fakeApi({ 'POST /api/restart': { ok: true }, 'GET /api/status': () => ({ ...STATUS, uptime_secs: uptimes.shift() }) });
    const s = await restartAndWait(api, { intervalMs: 1, sleep: async () => {} });
    expect(s.uptime_secs).toBe(2);
    expect(api.calls.map((c) => c.path)).toEqual(['/api/status', '/api/restart', '/api/status', '/api/status', '/api/status']);
  });

  it('gives up with a sentence after the bound', async () => {
    let now = 0;
    const api = fakeApi({ 'POST /api/restart': { ok: true }, 'GET /api/status': () => new Error('Cannot reach MetaClaw') });
    const wait = restartAndWait(api, { timeoutMs: 30_000, intervalMs: 1000, now: () => now, sleep: async (ms) => void (now += ms) });
    await expect(wait).rejects.toThrow('MetaClaw did not answer within 30 s after the restart');
    expect(api.calls.filter((c) => c.path === '/api/status').length).toBe(31);
  });
});
