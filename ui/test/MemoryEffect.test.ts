import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import Memory from '../src/screens/Memory.svelte';
import MemoryDetail from '../src/components/MemoryDetail.svelte';
import { ApiError } from '../src/lib/api';
import type { MemoryUnit } from '../src/lib/types';
import { fakeApi } from './helpers';
import { effectReport } from './effectData';

function unit(id: string): MemoryUnit {
  return {
    id,
    scope: 'default',
    kind: 'semantic',
    content: `Memory ${id}`,
    summary: '',
    fact_key: null,
    importance: 0.5,
    confidence: 1,
    pinned: false,
    status: 'active',
    source: 'manual',
    tags: [],
    created_ms: 1_700_000_000_000,
    updated_ms: 1_700_000_000_000,
    version: 1,
  };
}

const shown = (id: string) => ({ unit: unit(id), history: [], events: [] });
/** The definition after the term `Effect`. */
const effectLine = async () => (await screen.findByText('Effect', { selector: 'dt' })).nextElementSibling?.textContent;

describe('Memory effect', () => {
  it('the screen reads the figures once and the detail says what followed the memory', async () => {
    const api = fakeApi({
      'GET /api/memory': { units: [unit('01HMEMORY'), unit('01HOTHER')], next_cursor: null, total: 2 },
      'GET /api/memory/01HMEMORY': shown('01HMEMORY'),
      'GET /api/memory/01HOTHER': shown('01HOTHER'),
      'GET /api/effect': effectReport(),
    });
    render(Memory, { api });

    await fireEvent.click(await screen.findByRole('button', { name: 'Open memory 01HMEMORY' }));
    await screen.findByText('Memory 01HMEMORY', { selector: 'p' });
    expect(await effectLine()).toBe(
      'Injected 7 times in the last 30 days (560 block tokens); 25% of the answers that followed were corrected or asked again (1 of 4), against 8% without it.',
    );
    await fireEvent.click(screen.getByRole('button', { name: 'Open memory 01HOTHER' }));
    await screen.findByText('Memory 01HOTHER', { selector: 'p' });
    expect(await effectLine()).toBe('Not injected in the last 30 days.');
    expect(api.calls.filter((c) => c.path === '/api/effect')).toHaveLength(1);
  });

  it('says why the line is missing when the figures could not be read', async () => {
    render(MemoryDetail, {
      api: fakeApi({ 'GET /api/memory/01HMEMORY': shown('01HMEMORY') }),
      id: '01HMEMORY',
      effectReport: null,
      effectError: new ApiError(500, 'the database cannot be read').message,
      onChanged: () => {},
      onClose: () => {},
    });
    expect(await effectLine()).toBe('Not available: the database cannot be read');
  });

  it('has no Effect line when no figures were asked for', async () => {
    render(MemoryDetail, { api: fakeApi({ 'GET /api/memory/01HMEMORY': shown('01HMEMORY') }), id: '01HMEMORY', onChanged: () => {}, onClose: () => {} });
    await screen.findByText('Memory 01HMEMORY', { selector: 'p' });
    expect(screen.queryByText('Effect', { selector: 'dt' })).toBeNull();
  });
});
