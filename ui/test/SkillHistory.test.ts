import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, within } from '@testing-library/svelte';
import SkillHistory from '../src/components/SkillHistory.svelte';
import { createApi } from '../src/lib/api';
import { fetchRoutes } from './fetchRoutes';
import { until } from './helpers';

const V1 = '---\nname: tea-brewing\n---\n\nWarm the pot.\n';
const V2 = '---\nname: tea-brewing\n---\n\nWarm the pot.\nSteep 3 min.\n';
const NOW = '---\nname: tea-brewing\n---\n\nSteep 3 min.\n';

const effect = (turns: number, corrections = 0, thanks = 0) => ({ turns, labelled: turns, corrections, repeats: 0, thanks, errors: 0 });

/** The history of tea-brewing; a rollback to a version makes it current and the replaced file the newest version. */
function routes() {
  let current = NOW;
  let versions = [
    { n: 2, written_ms: 1_700_000_100_000, replaced_ms: 1_700_000_200_000, reason: 'learned', text: V2, effect: effect(5, 0, 2) },
    { n: 1, written_ms: 1_700_000_000_000, replaced_ms: 1_700_000_100_000, reason: 'edited', text: V1, effect: effect(0) },
  ];
  return fetchRoutes({
    'GET /api/skills/tea-brewing/history': () => ({
      name: 'tea-brewing',
      current: { text: current, since_ms: versions[0].replaced_ms, effect: effect(3, 2) },
      versions,
    }),
    'POST /api/skills/tea-brewing/rollback': (c: { body: { to: number } }) => {
      const restored = versions.find((v) => v.n === c.body.to)!;
      versions = [{ n: 3, written_ms: 1_700_000_200_000, replaced_ms: 1_700_000_300_000, reason: 'rollback', text: current, effect: effect(3, 2) }, ...versions];
      current = restored.text;
      return { name: 'tea-brewing', restored: c.body.to };
    },
  });
}

const api = (fetch: typeof globalThis.fetch) => createApi({ token: () => 't', fetch });

describe('SkillHistory', () => {
  it('lists versions newest first with why each was replaced and what followed its turns', async () => {
    const { fetch } = routes();
    render(SkillHistory, { api: api(fetch), name: 'tea-brewing' });

    const v2 = await screen.findByRole('listitem', { name: 'Version 2' });
    expect(v2.textContent).toContain('(learned)');
    expect(v2.textContent).toContain('5 turns, 2 thanked');
    const v1 = screen.getByRole('listitem', { name: 'Version 1' });
    expect(v1.textContent).toContain('(edited)');
    expect(v1.textContent).toContain('carried by no turn');
    expect(screen.getByText(/Current version .*: 3 turns, 2 corrected/)).toBeTruthy();
    const items = screen.getAllByRole('listitem').map((li) => li.getAttribute('aria-label'));
    expect(items).toEqual(['Version 2', 'Version 1']);
  });

  it('shows what changed after a version: the diff to the next newer file', async () => {
    const { fetch } = routes();
    render(SkillHistory, { api: api(fetch), name: 'tea-brewing' });

    await fireEvent.click(await screen.findByRole('button', { name: 'Changes after version 2' }));
    const diff = screen.getByLabelText('What changed after version 2');
    const marked = [...diff.querySelectorAll('[data-op="add"], [data-op="del"]')].map((l) => l.textContent?.trim());
    expect(marked).toEqual(['- Warm the pot.']);

    await fireEvent.click(screen.getByRole('button', { name: 'Changes after version 1' }));
    const v1 = within(screen.getByRole('listitem', { name: 'Version 1' })).getByLabelText('What changed after version 1');
    expect([...v1.querySelectorAll('[data-op="add"]')].map((l) => l.textContent?.trim())).toEqual(['+ Steep 3 min.']);
  });

  it('rolls back to a version, then shows the replaced file as the newest version', async () => {
    const { fetch, calls } = routes();
    const onChanged = vi.fn();
    render(SkillHistory, { api: api(fetch), name: 'tea-brewing', onChanged });

    await fireEvent.click(await screen.findByRole('button', { name: 'Roll back to version 1' }));
    expect(await screen.findByRole('listitem', { name: 'Version 3' })).toBeTruthy();
    expect(calls.filter((c) => c.method === 'POST').map((c) => [c.path, c.body])).toEqual([['/api/skills/tea-brewing/rollback', { to: 1 }]]);
    expect(screen.getByText('Restored version 1 of tea-brewing.')).toBeTruthy();
    expect(screen.getByRole('listitem', { name: 'Version 3' }).textContent).toContain('(rollback)');
    await until(() => expect(onChanged).toHaveBeenCalledTimes(1));
  });
});
