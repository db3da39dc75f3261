// A mocked `fetch` for createApi: answers by "METHOD /path" (query ignored) and records
// each call with its parsed body and query.

import { vi } from 'vitest';

export interface Call {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
}

export type Reply = unknown;

export function reply(status: number, body: unknown) {
  return { __status: status, body };
}

export function fetchRoutes(routes: Record<string, Reply>) {
  const calls: Call[] = [];
  const fetch = vi.fn(async (input: string, init: RequestInit) => {
    const url = new URL(input, 'http://x');
    const call: Call = {
      method: init.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
    };
    calls.push(call);
    let r = routes[`${call.method} ${call.path}`];
    if (typeof r === 'function') r = await (r as (c: Call) => unknown)(call);
    if (r instanceof Error) throw r;
    if (r === undefined) r = reply(404, { error: { message: `no route ${call.method} ${call.path}` } });
    const framed = r !== null && typeof r === 'object' && '__status' in r ? (r as { __status: number; body: unknown }) : null;
    const status = framed ? framed.__status : 200;
    const body = framed ? framed.body : r;
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  });
  return { fetch: fetch as unknown as typeof globalThis.fetch, calls };
}
