import { describe, expect, it, vi } from 'vitest';
import { render, screen } from '@testing-library/svelte';
import Skills from '../src/screens/Skills.svelte';
import { createApi } from '../src/lib/api';
import type { SseEvent } from '../src/lib/sse';
import { fetchRoutes } from './fetchRoutes';

const PROPOSAL = { name: 'dates-iso', description: 'Use when writing dates', sessions: ['s-1'], improves: false, at_ms: 1_700_000_000_000, text: '---\nname: dates-iso\n---\n\nYYYY-MM-DD\n', current: null };

describe('Skills screen', () => {
  it('shows a proposal the engine files while the screen is open', async () => {
    let waiting: unknown[] = [];
    const { fetch, calls } = fetchRoutes({
      'GET /api/skills/proposals': () => ({ proposals: waiting }),
      'GET /api/skills': { skills: [], errors: [] },
    });
    const api = createApi({ token: () => 't', fetch });
    let push: ((e: SseEvent) => void) | undefined;
    api.stream = vi.fn((_path: string, on: (e: SseEvent) => void, signal: AbortSignal) => {
      push = on;
      return new Promise<void>((r) => signal.addEventListener('abort', () => r()));
    });
    render(Skills, { api });
    await screen.findByText('No learned skill waits for approval.');
    const loads = () => calls.filter((c) => c.path === '/api/skills/proposals').length;
    expect(loads()).toBe(1);

    // Another event changes nothing; a proposal filed reloads the list.
    push?.({ event: 'turn', data: '{}' });
    waiting = [PROPOSAL];
    expect(loads()).toBe(1);
    push?.({ event: 'skill_proposed', data: '{"kind":"skill_proposed","names":["dates-iso"]}' });
    expect(await screen.findByRole('heading', { name: 'Proposed skills (1)' })).toBeTruthy();
    expect(screen.getByText('Learned from: s-1')).toBeTruthy();
    expect(loads()).toBe(2);
  });
});
