import { describe, expect, it, vi } from 'vitest';
import { ApiError, NO_TOKEN, createApi, query } from '../src/lib/api';

function reply(status: number, body: unknown, statusText = '') {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return new Response(text, { status, statusText, headers: { 'content-type': 'application/json' } });
}

describe('api client', () => {
  it('sends the token as a Bearer header and the query without empty values', async () => {
    const fetch = vi.fn().mockResolvedValue(reply(200, { ok: true }));
    const api = createApi({ token: () => 'tok', fetch });
    await expect(api.get('/api/memory', { kind: 'semantic', scope: '', cursor: null, limit: 25 })).resolves.toEqual({ ok: true });
    const [url, init] = fetch.mock.calls[0];
    expect(url).toBe('/api/memory?kind=semantic&limit=25');
    expect(init.headers.Authorization).toBe('Bearer tok');
    expect(init.method).toBe('GET');
  });

  it('posts JSON', async () => {
    const fetch = vi.fn().mockResolvedValue(reply(200, { state: 'paused' }));
    const api = createApi({ token: () => 'tok', fetch });
    await api.post('/api/scheduler/pause', { for: '2h' });
    const [, init] = fetch.mock.calls[0];
    expect(init.method).toBe('POST');
    expect(init.body).toBe('{"for":"2h"}');
    expect(init.headers['Content-Type']).toBe('application/json');
  });

  it('uses the token stored in sessionStorage by default', async () => {
    sessionStorage.setItem('metaclaw.adminToken', 'stored');
    const fetch = vi.fn().mockResolvedValue(reply(200, {}));
    await createApi({ fetch }).get('/api/status');
    expect(fetch.mock.calls[0][1].headers.Authorization).toBe('Bearer stored');
    sessionStorage.clear();
  });

  it('refuses to call without a token, saying how to get one', async () => {
    const fetch = vi.fn();
    const api = createApi({ token: () => null, fetch });
    await expect(api.get('/api/status')).rejects.toThrow(NO_TOKEN);
    expect(fetch).not.toHaveBeenCalled();
  });

  it("turns the API's error body into the message", async () => {
    const fetch = vi.fn().mockResolvedValue(reply(409, { error: { message: 'memory is off (memory.enabled: false)' } }));
    const api = createApi({ token: () => 't', fetch });
    const e = await api.get('/api/memory').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(409);
    expect((e as ApiError).message).toBe('memory is off (memory.enabled: false)');
  });

  it('explains a refused token', async () => {
    const fetch = vi.fn().mockResolvedValue(reply(401, { error: { message: 'admin API needs a token' } }));
    const e = (await createApi({ token: () => 'bad', fetch }).get('/api/status').catch((x: unknown) => x)) as ApiError;
    expect(e.status).toBe(401);
    expect(e.message).toContain('admin token was refused');
    expect(e.message).toContain('/ui/#token=');
  });

  it('shows a non-JSON error body as text, and the status line when empty', async () => {
    const fetch = vi
      .fn()
      .mockResolvedValueOnce(reply(502, 'upstream went away'))
      .mockResolvedValueOnce(reply(500, '', 'Internal Server Error'));
    const api = createApi({ token: () => 't', fetch });
    await expect(api.get('/a')).rejects.toThrow('upstream went away');
    await expect(api.get('/b')).rejects.toThrow('HTTP 500 Internal Server Error');
  });

  it('says when MetaClaw cannot be reached', async () => {
    const fetch = vi.fn().mockRejectedValue(new TypeError('Failed to fetch'));
    await expect(createApi({ token: () => 't', fetch }).get('/api/status')).rejects.toThrow(
      'Cannot reach MetaClaw: Failed to fetch',
    );
  });

  it('follows a Server-Sent Events stream', async () => {
    const body = 'event: snapshot\ndata: {"state":"open"}\n\n: keep-alive\n\nevent: paused\ndata: {}\n\n';
    const fetch = vi.fn().mockResolvedValue(new Response(body, { status: 200 }));
    const events: { event: string; data: string }[] = [];
    await createApi({ token: () => 't', fetch }).stream('/api/scheduler/events', (e) => events.push(e), new AbortController().signal);
    expect(events).toEqual([
      { event: 'snapshot', data: '{"state":"open"}' },
      { event: 'paused', data: '{}' },
    ]);
  });

  it('builds queries', () => {
    expect(query({})).toBe('');
    expect(query({ q: 'a b', pinned: false })).toBe('?q=a+b&pinned=false');
  });
});
