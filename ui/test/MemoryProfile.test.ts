import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import './deadlines';
import MemoryProfile from '../src/components/MemoryProfile.svelte';
import type { Api } from '../src/lib/api';
import type { MemoryUnit } from '../src/lib/types';

function unit(id: string, content: string, kind = 'preference'): MemoryUnit {
  return {
    id,
    scope: 'default',
    kind,
    content,
    summary: '',
    fact_key: null,
    importance: 0.8,
    confidence: 1,
    pinned: false,
    status: 'active',
    source: 'manual',
    tags: [],
    created_ms: 1_700_000_000_000,
    updated_ms: 1_700_000_000_000,
    version: 3,
  };
}

describe('MemoryProfile', () => {
  it('lists the standing rules, demotes one to a fact and forgets another', async () => {
    let units = [
      unit('r1', 'Always answer in British English.'),
      unit('r2', 'Run the linter before every commit.', 'procedural_observation'),
    ];
    const api: Api = {
      get: vi.fn(async () => ({ scope: 'default', profile_tokens: 300, on: true, whole: true, units })) as Api['get'],
      post: vi.fn(async (path: string) => {
        units = units.filter((u) => !path.includes(u.id));
        return {};
      }) as Api['post'],
      patch: vi.fn(async (path: string) => {
        units = units.filter((u) => !path.includes(u.id));
        return {};
      }) as Api['patch'],
      stream: vi.fn(),
    };
    const onChanged = vi.fn();
    render(MemoryProfile, { api, onChanged });

    expect(await screen.findByText('Always answer in British English.')).toBeTruthy();
    expect(screen.getByTestId('profile-state').textContent).toContain('In every turn');
    expect(screen.getByText('procedural observation')).toBeTruthy();

    await fireEvent.click(screen.getAllByRole('button', { name: 'Demote to a fact' })[0]);
    expect(api.patch).toHaveBeenCalledWith('/api/memory/r1', { kind: 'semantic', expected_version: 3 });
    await waitFor(() => expect(screen.queryByText('Always answer in British English.')).toBeNull());
    expect(onChanged).toHaveBeenCalledTimes(1);

    const confirm = vi.spyOn(window, 'confirm').mockReturnValue(true);
    await fireEvent.click(screen.getByRole('button', { name: 'Forget' }));
    expect(confirm).toHaveBeenCalled();
    expect(api.post).toHaveBeenCalledWith('/api/memory/r2/forget');
    expect(await screen.findByText('No standing rule or preference yet.')).toBeTruthy();
    confirm.mockRestore();
  });

  it('says the rules are found by relevance when the scope has no profile budget', async () => {
    const api: Api = {
      get: vi.fn(async () => ({ scope: 'team', profile_tokens: 0, on: false, whole: false, units: [] })) as Api['get'],
      post: vi.fn(),
      patch: vi.fn(),
      stream: vi.fn(),
    };
    render(MemoryProfile, { api, scope: 'team', onChanged: vi.fn() });
    await waitFor(() => expect(screen.getByTestId('profile-state').textContent).toContain('Found by relevance'));
    expect(api.get).toHaveBeenCalledWith('/api/memory/profile', { scope: 'team' });
  });
});
