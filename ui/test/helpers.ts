// A fake admin API: answers by method and path, records every call in order.

import { vi } from 'vitest';
import { ApiError, type Api } from '../src/lib/api';
import { DEADLINE_MS } from './deadlines';

// The real clock, kept before any test fakes timers: `until` waits in real time while a
// test drives a fake clock (vi.useFakeTimers) itself.
const realSetTimeout = globalThis.setTimeout;
const realNow = Date.now;

export type Handler = (body: unknown, params?: Record<string, unknown>) => unknown;

export interface FakeApi extends Api {
  calls: { method: string; path: string; body?: unknown; params?: Record<string, unknown> }[];
}

/** `routes` keys are `"GET /api/x"`; a handler returning an ApiError rejects with it. */
export function fakeApi(routes: Record<string, Handler | unknown>): FakeApi {
  const calls: FakeApi['calls'] = [];
  const answer = async (method: string, path: string, body?: unknown, params?: Record<string, unknown>) => {
    calls.push({ method, path, body, params });
    const r = routes[`${method} ${path}`];
    if (r === undefined) throw new ApiError(404, `no route ${method} ${path}`);
    const v = typeof r === 'function' ? (r as Handler)(body, params) : r;
    const out = await v;
    if (out instanceof Error) throw out;
    return structuredClone(out);
  };
  return {
    calls,
    get: vi.fn((path: string, params?: Record<string, unknown>) => answer('GET', path, undefined, params)) as Api['get'],
    post: vi.fn((path: string, body?: unknown) => answer('POST', path, body)) as Api['post'],
    patch: vi.fn((path: string, body: unknown) => answer('PATCH', path, body)) as Api['patch'],
    stream: vi.fn(
      (_path: string, _on: unknown, signal: AbortSignal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve())),
    ) as Api['stream'],
  };
}

/** Waits (bounded, in real time, fake timers or not) until `check` stops throwing; gives
 *  what it returned. */
export async function until<T>(check: () => T, ms = DEADLINE_MS): Promise<T> {
  const end = realNow() + ms;
  for (;;) {
    try {
      return check();
    } catch (e) {
      if (realNow() > end) throw e;
      await new Promise((r) => realSetTimeout(r, 10));
    }
  }
}
