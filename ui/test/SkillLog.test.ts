import { describe, expect, it } from 'vitest';
import { render, screen, within } from '@testing-library/svelte';
import SkillLog from '../src/components/SkillLog.svelte';
import { fakeApi } from './helpers';

describe('SkillLog', () => {
  it('renders each evolver run with its outcome, skills and reasons', async () => {
    const api = fakeApi({
      'GET /api/skills/log': {
        events: [
          {
            id: 2, at_ms: 1_700_000_100_000, trigger: 'session_end', session_ids: ['s1'], model: 'm', outcome: 'changed',
            added: ['write-tests'], improved: ['tidy-commits'], rejected: [{ name: 'vague-tip', reason: 'too generic' }],
            error: null, generation: 3, detail: {},
          },
          {
            id: 1, at_ms: 1_700_000_000_000, trigger: 'manual', session_ids: [], model: null, outcome: 'failed',
            added: [], improved: [], rejected: [], error: 'evolver model timed out', generation: 2, detail: {},
          },
        ],
        counts: { events: 2, failed: 1, skills_added: 1, skills_improved: 1, last_at_ms: 1_700_000_100_000 },
      },
    });
    render(SkillLog, { api });

    const rows = await screen.findAllByRole('row');
    expect(rows).toHaveLength(3); // header + two runs
    const first = within(rows[1]);
    expect(first.getByText('changed')).toBeTruthy();
    expect(first.getByText('added: write-tests')).toBeTruthy();
    expect(first.getByText('improved: tidy-commits')).toBeTruthy();
    expect(first.getByText('vague-tip: too generic')).toBeTruthy();
    expect(first.getByText(new Date(1_700_000_100_000).toLocaleString())).toBeTruthy();
    const second = within(rows[2]);
    expect(second.getByText('failed')).toBeTruthy();
    expect(second.getByText('evolver model timed out')).toBeTruthy();
    expect(screen.getByText('2 runs, 1 failed; 1 skills added, 1 improved')).toBeTruthy();
    expect(api.calls[0]).toMatchObject({ path: '/api/skills/log', params: { limit: 20 } });
  });
});
