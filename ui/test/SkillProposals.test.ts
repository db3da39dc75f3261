import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, within } from '@testing-library/svelte';
import SkillProposals from '../src/components/SkillProposals.svelte';
import { createApi } from '../src/lib/api';
import { fetchRoutes, reply } from './fetchRoutes';
import { until } from './helpers';

const CURRENT = '---\nname: tea-brewing\n---\n\n# Tea\nWarm the pot.\nSteep 3 min.\n';
const PROPOSED = '---\nname: tea-brewing\n---\n\n# Tea\nWarm the pot.\nSteep 4 min.\n';
const NEW = '---\nname: bike-care\n---\n\nOil the chain.\n';

const PROPOSALS = [
  { name: 'bike-care', description: 'Use when the chain squeaks', sessions: ['s-2'], improves: false, at_ms: 1_700_000_000_000, text: NEW, current: null },
  { name: 'tea-brewing', description: 'Use when brewing tea', sessions: ['s-1', 's-3'], improves: true, at_ms: 1_700_000_100_000, text: PROPOSED, current: CURRENT },
];

function routes() {
  let waiting = structuredClone(PROPOSALS);
  const drop = (name: string) => (waiting = waiting.filter((p) => p.name !== name));
  return fetchRoutes({
    'GET /api/skills/proposals': () => ({ proposals: waiting }),
    'POST /api/skills/proposals/tea-brewing/approve': () => {
      drop('tea-brewing');
      return { approved: 'tea-brewing' };
    },
    'POST /api/skills/proposals/bike-care/approve': () => reply(400, { error: { message: 'the file names `other`, not `bike-care`' } }),
    'POST /api/skills/proposals/bike-care/reject': () => {
      drop('bike-care');
      return { rejected: 'bike-care' };
    },
  });
}

const api = (fetch: typeof globalThis.fetch) => createApi({ token: () => 't', fetch });

describe('SkillProposals', () => {
  it('lists each proposal with its sessions and a line diff against the current skill', async () => {
    const { fetch } = routes();
    render(SkillProposals, { api: api(fetch) });

    expect(await screen.findByRole('heading', { name: 'Proposed skills (2)' })).toBeTruthy();
    const tea = screen.getByRole('listitem', { name: 'tea-brewing' });
    expect(tea.textContent).toContain('improves the current skill');
    expect(tea.textContent).toContain('Learned from: s-1, s-3');
    const diff = within(tea).getByLabelText('Changes of tea-brewing');
    const marked = [...diff.querySelectorAll('[data-op="add"], [data-op="del"]')].map((l) => l.textContent?.trim());
    expect(marked).toEqual(['- Steep 3 min.', '+ Steep 4 min.']);

    const bike = screen.getByRole('listitem', { name: 'bike-care' });
    expect(bike.textContent).toContain('new skill');
    const added = within(bike).getByLabelText('Changes of bike-care').querySelectorAll('[data-op="add"]');
    expect(added).toHaveLength(NEW.trimEnd().split('\n').length);
  });

  it('approves as proposed (no text), then reloads and tells the screen', async () => {
    const { fetch, calls } = routes();
    const onChanged = vi.fn();
    render(SkillProposals, { api: api(fetch), onChanged });

    await fireEvent.click(await screen.findByRole('button', { name: 'Approve tea-brewing' }));
    expect(await screen.findByRole('heading', { name: 'Proposed skills (1)' })).toBeTruthy();
    const posts = calls.filter((c) => c.method === 'POST');
    expect(posts.map((c) => [c.path, c.body])).toEqual([['/api/skills/proposals/tea-brewing/approve', {}]]);
    expect(screen.getByText('Approved tea-brewing: it is in the library.')).toBeTruthy();
    await until(() => expect(onChanged).toHaveBeenCalledTimes(1));
  });

  it('approves an edited file with its text, and shows a refusal while keeping the proposal', async () => {
    const { fetch, calls } = routes();
    render(SkillProposals, { api: api(fetch) });

    await fireEvent.click(await screen.findByRole('button', { name: 'Edit bike-care' }));
    const box = screen.getByRole('textbox', { name: /Edit bike-care/ }) as HTMLTextAreaElement;
    expect(box.value).toBe(NEW);
    await fireEvent.input(box, { target: { value: NEW.replace('name: bike-care', 'name: other') } });
    await fireEvent.click(screen.getByRole('button', { name: 'Approve bike-care as edited' }));

    expect(await screen.findByText(/Could not approve bike-care: the file names `other`/)).toBeTruthy();
    const post = calls.find((c) => c.method === 'POST');
    expect(post?.body).toEqual({ text: NEW.replace('name: bike-care', 'name: other') });
    expect(screen.getByRole('heading', { name: 'Proposed skills (2)' })).toBeTruthy();
  });

  it('rejects, and says when nothing waits', async () => {
    const { fetch, calls } = routes();
    render(SkillProposals, { api: api(fetch) });

    await fireEvent.click(await screen.findByRole('button', { name: 'Reject bike-care' }));
    expect(await screen.findByRole('heading', { name: 'Proposed skills (1)' })).toBeTruthy();
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.path)).toEqual(['/api/skills/proposals/bike-care/reject']);
    expect(screen.queryByRole('listitem', { name: 'bike-care' })).toBeNull();

    await fireEvent.click(screen.getByRole('button', { name: 'Approve tea-brewing' }));
    expect(await screen.findByText('No learned skill waits for approval.')).toBeTruthy();
  });
});
