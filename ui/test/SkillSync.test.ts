import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import SkillSync from '../src/components/SkillSync.svelte';
import { createApi } from '../src/lib/api';
import { fetchRoutes, reply } from './fetchRoutes';
import { until } from './helpers';

const OFF = { enabled: false, remote: null, last_sync_ms: null, last_error: null, pending: [], deleted: [] };
const ON = {
  enabled: true,
  remote: 'git@example.com:team/skills.git',
  last_sync_ms: 1_700_000_000_000,
  last_error: 'git push: rejected',
  pending: ['release-notes'],
  deleted: [],
};

describe('SkillSync', () => {
  it('says when no team library is set up, and offers no sync', async () => {
    const { fetch, calls } = fetchRoutes({ 'GET /api/skills/sync': OFF });
    render(SkillSync, { api: createApi({ token: () => 't', fetch }) });

    expect((await screen.findByTestId('skill-sync-line')).textContent).toBe('Team library: not set up (skills.sync.remote)');
    const button = screen.getByRole('button', { name: 'Sync now' }) as HTMLButtonElement;
    expect(button.disabled).toBe(true);
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual(['GET /api/skills/sync']);
  });

  it('shows the remote, the last sync and error, and what a sync did', async () => {
    let synced = false;
    const { fetch, calls } = fetchRoutes({
      'GET /api/skills/sync': () => (synced ? { ...ON, last_error: null, pending: [], last_sync_ms: 1_700_000_500_000 } : ON),
      'POST /api/skills/sync': () => {
        synced = true;
        return {
          report: {
            sent: ['release-notes'],
            received: ['tidy-commits', 'write-tests'],
            quarantined: [['fetch-and-run', [{ rule: 'download-and-execute', reason: 'r', field: 'body', line: 1, excerpt: 'e' }]]],
            conflicts: ['deploy: changed on both sides, yours kept as deploy-ana (disabled)'],
            deleted: [],
            waiting: null,
          },
        };
      },
    });
    let onSynced = 0;
    render(SkillSync, { api: createApi({ token: () => 't', fetch }), onSynced: () => onSynced++ });

    const line = await screen.findByTestId('skill-sync-line');
    expect(line.textContent).toBe(`Team library: git@example.com:team/skills.git — last synced ${new Date(1_700_000_000_000).toLocaleString()}`);
    expect(screen.getByText('Last error: git push: rejected')).toBeTruthy();
    expect(screen.getByText('Waiting to be sent: release-notes')).toBeTruthy();

    await fireEvent.click(screen.getByRole('button', { name: 'Sync now' }));
    expect(await screen.findByText('Sent 1, received 2, quarantined 1, conflicts 1, deleted 0.')).toBeTruthy();
    expect(screen.getByText('received: tidy-commits, write-tests')).toBeTruthy();
    expect(screen.getByText('quarantined: fetch-and-run (download-and-execute)')).toBeTruthy();
    expect(screen.getByText('conflict: deploy: changed on both sides, yours kept as deploy-ana (disabled)')).toBeTruthy();
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual(['GET /api/skills/sync', 'POST /api/skills/sync', 'GET /api/skills/sync']);
    await until(() => expect(screen.getByTestId('skill-sync-line').textContent).toContain(new Date(1_700_000_500_000).toLocaleString()));
    expect(screen.queryByText('Last error: git push: rejected')).toBeNull();
    expect(onSynced).toBe(1);
  });

  it('shows a failed sync in words', async () => {
    const { fetch } = fetchRoutes({
      'GET /api/skills/sync': ON,
      'POST /api/skills/sync': reply(503, { error: { message: 'no team library: set skills.sync.remote' } }),
    });
    render(SkillSync, { api: createApi({ token: () => 't', fetch }) });
    await fireEvent.click(await screen.findByRole('button', { name: 'Sync now' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Sync failed: no team library: set skills.sync.remote');
  });
});
