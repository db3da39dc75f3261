import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen, within } from '@testing-library/svelte';
import Skills from '../src/screens/Skills.svelte';
import { ApiError } from '../src/lib/api';
import type { Skill } from '../src/lib/types';
import { fakeApi, until } from './helpers';
import { effectReport, FLAG } from './effectData';

function skill(name: string, disabled = false): Skill {
  return { name, description: `About ${name}`, category: null, tags: [], always: false, disabled, body: 'Body.\n' };
}

const LOG = { events: [], counts: { events: 0, failed: 0, skills_added: 0, skills_improved: 0, last_at_ms: null } };

const noHistory = (name: string) => ({ name, current: { text: '', since_ms: 0, effect: null }, versions: [] });

/** The Skills screen with three skills: one flagged, one injected, one never injected. */
function screenApi(effect: unknown = effectReport()) {
  const state: Record<string, boolean> = { 'debug-failing-tests': false, 'tidy-commits': false, 'write-docs': false };
  const toggle = (name: string, disabled: boolean) => () => {
    state[name] = disabled;
    return skill(name, disabled);
  };
  const api = fakeApi({
    'GET /api/skills': () => ({ skills: Object.keys(state).map((n) => skill(n, state[n])), errors: [] }),
    'GET /api/skills/log': LOG,
    'GET /api/skills/quarantine': { quarantined: [] },
    'GET /api/skills/proposals': { proposals: [] },
    'GET /api/skills/debug-failing-tests/history': noHistory('debug-failing-tests'),
    'GET /api/skills/write-docs/history': noHistory('write-docs'),
    'GET /api/skills/sync': { enabled: false, remote: null, last_sync_ms: null, last_error: null, pending: [], deleted: [] },
    'GET /api/effect': effect,
    'GET /api/skills/debug-failing-tests': () => skill('debug-failing-tests', state['debug-failing-tests']),
    'GET /api/skills/write-docs': () => skill('write-docs', state['write-docs']),
    'POST /api/skills/debug-failing-tests/disable': toggle('debug-failing-tests', true),
    'POST /api/skills/debug-failing-tests/enable': toggle('debug-failing-tests', false),
  });
  return { api, state };
}

const listItem = (name: string) => screen.getByRole('button', { name }).closest('li') as HTMLElement;

describe('Skills effect', () => {
  it('lists how often each skill was used and badges the flagged one, with the reason as its description', async () => {
    const { api } = screenApi();
    render(Skills, { api });

    const flagged = await screen.findByRole('button', { name: 'debug-failing-tests' });
    await until(() => expect(within(listItem('debug-failing-tests')).getByText('flagged')).toBeTruthy());
    const described = document.getElementById(flagged.getAttribute('aria-describedby') ?? '');
    expect(described?.textContent).toBe(FLAG);
    expect(within(listItem('debug-failing-tests')).getByText('flagged').getAttribute('title')).toBe(FLAG);
    expect(within(listItem('debug-failing-tests')).getByText(/used 42×/)).toBeTruthy();

    // Used but not flagged: the figure, no badge, no description.
    expect(within(listItem('tidy-commits')).getByText(/used 3×/)).toBeTruthy();
    expect(within(listItem('tidy-commits')).queryByText('flagged')).toBeNull();
    expect(screen.getByRole('button', { name: 'tidy-commits' }).hasAttribute('aria-describedby')).toBe(false);
    // Never injected: neither.
    expect(within(listItem('write-docs')).queryByText(/used/)).toBeNull();
    expect(api.calls.filter((c) => c.path === '/api/effect').map((c) => c.params)).toEqual([{ days: 30 }]);
  });

  it('disables a flagged skill from its Effect section, and Undo enables it again', async () => {
    const { api, state } = screenApi();
    render(Skills, { api });

    await fireEvent.click(await screen.findByRole('button', { name: 'debug-failing-tests' }));
    const effect = await screen.findByRole('region', { name: 'Effect' });
    await until(() =>
      expect(within(effect).getByText(/^Injected 42 times in the last 30 days \(3,100 block tokens\); 40% of the answers that followed were corrected or asked again \(10 of 25\), against 5% without it\.$/)).toBeTruthy(),
    );
    expect(within(effect).getByText(FLAG)).toBeTruthy();

    await fireEvent.click(within(effect).getByRole('button', { name: 'Disable this skill' }));
    const undo = await within(effect).findByRole('button', { name: 'Undo' });
    expect(within(effect).getByRole('status').textContent).toBe('Disabled.');
    expect(state['debug-failing-tests']).toBe(true);
    expect(within(effect).queryByRole('button', { name: 'Disable this skill' })).toBeNull();
    // The list reloads and shows the skill disabled.
    await until(() => expect(within(listItem('debug-failing-tests')).getByText('(disabled)')).toBeTruthy());

    await fireEvent.click(undo);
    expect(await within(effect).findByRole('button', { name: 'Disable this skill' })).toBeTruthy();
    expect(within(effect).getByRole('status').textContent).toBe('Enabled again.');
    expect(state['debug-failing-tests']).toBe(false);
    expect(api.calls.filter((c) => c.method === 'POST').map((c) => c.path)).toEqual([
      '/api/skills/debug-failing-tests/disable',
      '/api/skills/debug-failing-tests/enable',
    ]);
    await until(() => expect(within(listItem('debug-failing-tests')).queryByText('(disabled)')).toBeNull());
  });

  it('says a skill no turn carried was not injected, with no flag or button', async () => {
    const { api } = screenApi();
    render(Skills, { api });
    await fireEvent.click(await screen.findByRole('button', { name: 'write-docs' }));
    const effect = await screen.findByRole('region', { name: 'Effect' });
    expect(await within(effect).findByText('Not injected in the last 30 days.')).toBeTruthy();
    expect(within(effect).queryByRole('button')).toBeNull();
  });

  it('keeps the Undo away when disabling fails, and says why', async () => {
    const { api } = screenApi();
    render(Skills, { api });
    // Replace the route after the fake was built: this disable fails.
    const post = api.post;
    api.post = (async <T,>(path: string, body?: unknown): Promise<T> => {
      if (path.endsWith('/disable')) throw new ApiError(400, 'the skills directory is read-only');
      return post<T>(path, body);
    }) as typeof api.post;
    await fireEvent.click(await screen.findByRole('button', { name: 'debug-failing-tests' }));
    const effect = await screen.findByRole('region', { name: 'Effect' });
    await fireEvent.click(await within(effect).findByRole('button', { name: 'Disable this skill' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Could not disable the skill: the skills directory is read-only');
    expect(within(effect).queryByRole('button', { name: 'Undo' })).toBeNull();
    expect(within(effect).getByRole('button', { name: 'Disable this skill' })).toBeTruthy();
  });

  it('says in the detail when the figures could not be loaded', async () => {
    const { api } = screenApi(new ApiError(500, 'the database cannot be read'));
    render(Skills, { api });
    await fireEvent.click(await screen.findByRole('button', { name: 'write-docs' }));
    const effect = await screen.findByRole('region', { name: 'Effect' });
    expect((await within(effect).findByRole('alert')).textContent).toBe('The effect figures could not be loaded: the database cannot be read');
    // The library is still listed, without figures.
    expect(within(listItem('debug-failing-tests')).queryByText('flagged')).toBeNull();
  });
});
