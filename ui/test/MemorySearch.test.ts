import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import './deadlines';
import MemorySearch from '../src/components/MemorySearch.svelte';
import type { Api } from '../src/lib/api';

describe('MemorySearch', () => {
  it('shows each hit with its score and the reason it matched', async () => {
    const hit = {
      unit: { id: 'm1', content: 'User prefers tabs', summary: '' },
      score: 1.49,
      matched_terms: ['tabs'],
      reason: "matched 'tabs'; importance 0.8; updated today",
    };
    const api: Api = {
      get: vi.fn(async () => [hit]) as Api['get'],
      post: vi.fn(),
      patch: vi.fn(),
      stream: vi.fn(),
    };
    const onSelect = vi.fn();
    render(MemorySearch, { api, onSelect });

    await fireEvent.input(screen.getByLabelText('What to look for'), { target: { value: 'tabs' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Search' }));
    expect(api.get).toHaveBeenCalledWith('/api/memory/search', { q: 'tabs', scope: '', limit: 20 });
    expect(await screen.findByText("matched 'tabs'; importance 0.8; updated today")).toBeTruthy();
    expect(screen.getByText('score 1.490')).toBeTruthy();

    await fireEvent.click(screen.getByRole('button', { name: 'User prefers tabs' }));
    expect(onSelect).toHaveBeenCalledWith('m1');
  });
});
