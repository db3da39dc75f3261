import { describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/svelte';
import EffectPanel from '../src/components/EffectPanel.svelte';
import { ApiError } from '../src/lib/api';
import { fakeApi, until } from './helpers';
import { arm, effectReport, holdout } from './effectData';

/** The cells of a table's body rows, the row header first. */
const rows = (table: HTMLElement) => [...table.querySelectorAll('tbody tr')].map((r) => [...r.children].map((c) => c.textContent));

describe('EffectPanel', () => {
  it('compares the held-out sessions with the rest in a sentence and a table, and sums up every turn', async () => {
    const api = fakeApi({ 'GET /api/effect': effectReport() });
    render(EffectPanel, { api });

    expect(screen.getByRole('region', { name: 'Effect of learning (last 30 days)' })).toBeTruthy();
    expect(await screen.findByText('Held-out turns were corrected or asked again more often (14% against 8%).')).toBeTruthy();
    expect(screen.getByText('412 main turns; 8% of the answers the user followed up on were corrected or asked again (20 of 250).')).toBeTruthy();
    expect(api.calls).toEqual([{ method: 'GET', path: '/api/effect', body: undefined, params: { days: 30 } }]);

    const table = screen.getByRole('table', { name: 'With and without MetaClaw' });
    expect([...table.querySelectorAll('thead th')].map((th) => th.textContent)).toEqual([
      'Group', 'Sessions', 'Turns', 'Labelled', 'Corrected or repeated (rate)', 'Said it worked (rate)', 'Errors / retries', 'Judge score',
    ]);
    expect(rows(table)).toEqual([
      ['With MetaClaw', '40', '330', '200', '16 (8%)', '50 (25%)', '1 / 0', '—'],
      ['Held out', '9', '82', '50', '7 (14%)', '0 (0%)', '1 / 2', '0.43'],
    ]);
    expect(screen.getByRole('rowheader', { name: 'Held out' })).toBeTruthy();
  });

  it('says no comparison is claimed yet while a side has too few labelled turns', async () => {
    const early = holdout({ share: 0.5, verdict: null, with: arm({ sessions: 3, labelled: 4 }), without: arm({ sessions: 2, labelled: 1 }) });
    render(EffectPanel, { api: fakeApi({ 'GET /api/effect': effectReport({ holdout: early }) }) });
    expect(
      await screen.findByText(
        "50% of sessions are held out (served without MetaClaw's block). So far 4 labelled turns with MetaClaw and 1 held out, of the 20 each side needs; no comparison is claimed yet.",
      ),
    ).toBeTruthy();
    expect(rows(screen.getByRole('table', { name: 'With and without MetaClaw' })).map((r) => r.slice(0, 2))).toEqual([
      ['With MetaClaw', '3'],
      ['Held out', '2'],
    ]);
  });

  it('with the holdout off, says how to turn it on and leaves out the table of zeros', async () => {
    const off = holdout({ share: 0, verdict: null, without: arm({ sessions: 0, turns: 0, labelled: 0 }) });
    render(EffectPanel, { api: fakeApi({ 'GET /api/effect': effectReport({ holdout: off }) }) });
    expect(await screen.findByText(/^The holdout is off, .*metaclaw config set learning\.holdout 0\.1/)).toBeTruthy();
    expect(screen.queryByRole('table')).toBeNull();
    expect(screen.getByText(/^412 main turns; /)).toBeTruthy();
  });

  it('reloads when the revision changes and says a failure in words', async () => {
    let fail = false;
    const api = fakeApi({
      'GET /api/effect': () => (fail ? new ApiError(500, 'the database cannot be read') : effectReport()),
    });
    const { rerender } = render(EffectPanel, { api, revision: 0 });
    expect(await screen.findByText(/^412 main turns; /)).toBeTruthy();
    fail = true;
    await rerender({ api, revision: 1 });
    expect((await screen.findByRole('alert')).textContent).toBe('the database cannot be read');
    await until(() => expect(api.calls.length).toBe(2));
  });
});
