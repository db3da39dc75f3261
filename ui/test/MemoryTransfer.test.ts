import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import './deadlines';
import MemoryTransfer from '../src/components/MemoryTransfer.svelte';
import { createApi } from '../src/lib/api';
import { readText } from '../src/lib/memoryTransfer';

interface Seen {
  method: string;
  url: URL;
  auth: string | null;
  type: string | null;
  body: unknown;
}

/** A fetch that records requests and answers by "METHOD /path" with a status and raw text. */
function mockFetch(routes: Record<string, [number, string]>) {
  const seen: Seen[] = [];
  const fetch = vi.fn(async (input: string, init: RequestInit) => {
    const url = new URL(input, 'http://x');
    const headers = new Headers(init.headers);
    const method = init.method ?? 'GET';
    seen.push({ method, url, auth: headers.get('authorization'), type: headers.get('content-type'), body: init.body });
    const [status, text] = routes[`${method} ${url.pathname}`] ?? [404, '{"error":{"message":"no route"}}'];
    return new Response(text, { status });
  });
  return { fetch: fetch as unknown as typeof globalThis.fetch, seen };
}

const JSONL = '{"id":"m1","content":"a"}\n{"id":"m2","content":"b"}\n';

describe('MemoryTransfer', () => {
  const created: Blob[] = [];
  beforeEach(() => {
    created.length = 0;
    URL.createObjectURL = vi.fn((b: Blob) => {
      created.push(b);
      return `blob:memory-${created.length}`;
    });
    URL.revokeObjectURL = vi.fn();
  });
  afterEach(() => vi.restoreAllMocks());

  it('exports through the token-carrying client, with the scope, into a download link', async () => {
    const { fetch, seen } = mockFetch({ 'GET /api/memory/export': [200, JSONL] });
    const api = createApi({ token: () => 'secret-token', fetch });
    render(MemoryTransfer, { api, scope: 'work' });

    await fireEvent.click(screen.getByRole('button', { name: 'Export memories' }));
    const link = (await screen.findByRole('link', { name: 'Download metaclaw-memory.jsonl' })) as HTMLAnchorElement;
    expect(link.getAttribute('download')).toBe('metaclaw-memory.jsonl');
    expect(link.getAttribute('href')).toBe('blob:memory-1');
    expect(await readText(created[0])).toBe(JSONL);
    expect(seen).toHaveLength(1);
    expect(seen[0].auth).toBe('Bearer secret-token');
    expect(seen[0].url.searchParams.get('scope')).toBe('work');
    expect(screen.getByText('2 memories ready (scope work).')).toBeTruthy();
  });

  it('shows an export failure in words', async () => {
    const { fetch } = mockFetch({ 'GET /api/memory/export': [409, '{"error":{"message":"memory is off (memory.enabled: false)"}}'] });
    render(MemoryTransfer, { api: createApi({ token: () => 't', fetch }) });
    await fireEvent.click(screen.getByRole('button', { name: 'Export memories' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Export failed: memory is off (memory.enabled: false)');
    expect(screen.queryByRole('link')).toBeNull();
  });

  it("imports the file's text and shows the counts", async () => {
    const { fetch, seen } = mockFetch({
      'POST /api/memory/import': [200, '{"imported":1,"skipped_existing":1,"errors":[[3,"missing field `content`"]]}'],
    });
    const onImported = vi.fn();
    render(MemoryTransfer, { api: createApi({ token: () => 't', fetch }), onImported });

    const text = JSONL + '{"id":"m3"}\n';
    const input = screen.getByLabelText('Memory file to import (JSONL)') as HTMLInputElement;
    await fireEvent.change(input, { target: { files: [new File([text], 'memories.jsonl')] } });
    await fireEvent.click(screen.getByRole('button', { name: 'Import' }));

    expect(await screen.findByText('Imported 1; 1 already stored; 1 line not imported.')).toBeTruthy();
    expect(screen.getByText('Line 3: missing field `content`')).toBeTruthy();
    expect(seen).toHaveLength(1);
    expect(seen[0].method).toBe('POST');
    expect(seen[0].url.pathname).toBe('/api/memory/import');
    expect(seen[0].body).toBe(text);
    expect(seen[0].auth).toBe('Bearer t');
    expect(onImported).toHaveBeenCalledTimes(1);
  });
});
