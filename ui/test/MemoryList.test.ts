import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import './deadlines';
import MemoryList from '../src/components/MemoryList.svelte';
import type { Api } from '../src/lib/api';
import { ApiError } from '../src/lib/api';
import { NO_FILTERS, type MemoryUnit } from '../src/lib/types';

function unit(id: string, content: string): MemoryUnit {
  return {
    id,
    scope: 'default',
    kind: 'preference',
    content,
    summary: '',
    fact_key: null,
    importance: 0.8,
    confidence: 1,
    pinned: id === 'm1',
    status: 'active',
    source: 'manual',
    tags: [],
    created_ms: 1_700_000_000_000,
    updated_ms: 1_700_000_000_000,
    version: 1,
  };
}

function fakeApi(get: (path: string, params?: Record<string, unknown>) => Promise<unknown>): Api {
  return {
    get: vi.fn(get) as Api['get'],
    post: vi.fn(),
    patch: vi.fn(),
    stream: vi.fn(),
  };
}

describe('MemoryList', () => {
  it('renders rows and pages forward and back with the server cursor', async () => {
    const api = fakeApi(async (_path, params) =>
      params?.cursor === 'c2'
        ? { units: [unit('m3', 'Third memory')], next_cursor: null, total: 3 }
        : { units: [unit('m1', 'First memory'), unit('m2', 'Second memory')], next_cursor: 'c2', total: 3 },
    );
    const onSelect = vi.fn();
    render(MemoryList, { api, filters: { ...NO_FILTERS, kind: 'preference' }, pageSize: 2, onSelect });

    expect(await screen.findByText(/First memory/)).toBeTruthy();
    expect(screen.getByText(/Second memory/)).toBeTruthy();
    expect(screen.getByText('1–2 of 3')).toBeTruthy();
    expect(api.get).toHaveBeenCalledWith('/api/memory', expect.objectContaining({ kind: 'preference', limit: 2, cursor: null }));
    const prev = screen.getByRole('button', { name: 'Previous page' }) as HTMLButtonElement;
    expect(prev.disabled).toBe(true);

    await fireEvent.click(screen.getByRole('button', { name: 'Next page' }));
    expect(await screen.findByText('Third memory')).toBeTruthy();
    expect(screen.queryByText(/First memory/)).toBeNull();
    expect(screen.getByText('3–3 of 3')).toBeTruthy();
    expect(api.get).toHaveBeenLastCalledWith('/api/memory', expect.objectContaining({ cursor: 'c2' }));
    expect((screen.getByRole('button', { name: 'Next page' }) as HTMLButtonElement).disabled).toBe(true);

    await fireEvent.click(screen.getByRole('button', { name: 'Previous page' }));
    expect(await screen.findByText(/First memory/)).toBeTruthy();
    expect(api.get).toHaveBeenLastCalledWith('/api/memory', expect.objectContaining({ cursor: null }));
    expect(api.get).toHaveBeenCalledTimes(3);

    await fireEvent.click(screen.getByRole('button', { name: 'Open memory m2' }));
    expect(onSelect).toHaveBeenCalledWith('m2');
  });

  it('shows a failure as text', async () => {
    const api = fakeApi(async () => {
      throw new ApiError(409, 'memory is off (memory.enabled: false)');
    });
    render(MemoryList, { api, filters: NO_FILTERS, onSelect: vi.fn() });
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toBe('memory is off (memory.enabled: false)');
  });

  it('says when nothing matches', async () => {
    const api = fakeApi(async () => ({ units: [], next_cursor: null, total: 0 }));
    render(MemoryList, { api, filters: NO_FILTERS, onSelect: vi.fn() });
    await waitFor(() => expect(screen.getByText('Nothing matches.')).toBeTruthy());
  });
});
