import { describe, expect, it } from 'vitest';
import { render, screen, within } from '@testing-library/svelte';
import CostPanel from '../src/components/CostPanel.svelte';
import { createApi } from '../src/lib/api';
import type { CostReport } from '../src/lib/types';
import { fakeApi } from './helpers';
import { fetchRoutes, reply } from './fetchRoutes';
import { costReport, emptyReport, threeDays } from './costData';

/** The cells of a table's body rows, the row header first. */
const rows = (table: HTMLElement) => [...table.querySelectorAll('tbody tr')].map((r) => [...r.children].map((c) => c.textContent));

describe('CostPanel', () => {
  it('says the window in sentences and lists it per model and per learning purpose', async () => {
    const api = fakeApi({ 'GET /api/stats': costReport() });
    render(CostPanel, { api });

    expect(screen.getByRole('heading', { name: 'Cost (last 24 hours)' })).toBeTruthy();
    expect(await screen.findByText('412 turns in the last 24 hours: 5,210,344 tokens in, 48,211 out, $3.41.')).toBeTruthy();
    expect(screen.getByText("91.3% of the prompt was read from the provider's cache (about 91.6% without MetaClaw's blocks).")).toBeTruthy();
    expect(screen.getByText('MetaClaw added 182,400 tokens, at most $0.55.')).toBeTruthy();
    expect(screen.getByText('Learning since 2026-12-03 (UTC): 14 calls (1 failed), 61,020 tokens in, 5,210 out, $0.19.')).toBeTruthy();
    expect(screen.getByText(/^No price for local-llama, embeddings \(learning\): shown as tokens only\./)).toBeTruthy();
    expect(api.calls).toEqual([{ method: 'GET', path: '/api/stats', body: undefined, params: { hours: 24, days: 14 } }]);

    const perModel = screen.getByRole('table', { name: 'Per model' });
    expect([...perModel.querySelectorAll('thead th')].map((th) => th.textContent)).toEqual([
      'Model', 'Turns', 'Tokens in', 'Out', 'Cache read', 'Cache write', 'Injected', 'Cost',
    ]);
    expect(rows(perModel)).toEqual([
      ['claude-sonnet-4-5', '400', '5,000,000', '45,000', '4,570,000', '120,000', '180,000', '$3.41'],
      ['local-llama', '12', '210,344', '3,211', '0', '0', '2,400', 'no price'],
    ]);
    expect(within(perModel).getByText('$3.41').getAttribute('title')).toBe('list price built into MetaClaw');

    const learning = screen.getByRole('table', { name: 'Learning per purpose, since 2026-12-03 (UTC)' });
    expect(rows(learning)).toEqual([
      ['embeddings', 'local-embed', '4', '0', '11,020', '1,210', 'no price'],
      ['evolution', 'gpt-4o-mini', '10', '1', '50,000', '4,000', '$0.19'],
    ]);
  });

  it('lists the days with a sentence, charts and a table, a missing figure shown as such', async () => {
    render(CostPanel, { api: fakeApi({ 'GET /api/stats': costReport({ daily: threeDays() }) }) });
    expect(await screen.findByRole('heading', { name: 'Day by day (UTC)', level: 3 })).toBeTruthy();
    expect(screen.getByTestId('cost-days-summary').textContent).toMatch(/^Over the last 3 days: the cache served 80\.0% to 91\.3%/);
    expect(screen.getByText("Prompt read from the provider's cache, and the estimate without MetaClaw's blocks")).toBeTruthy();
    expect(rows(screen.getByRole('table', { name: 'Day by day' }))).toEqual([
      ['2026-12-02', '0', '—', '—', '0', 'no price', '0', 'no price'],
      ['2026-12-03', '30', '80.0%', '85.0%', '9,000', 'no price', '2', 'no price'],
      ['2026-12-04', '412', '91.3%', '91.6%', '182,400', '$0.55', '14', '$0.19'],
    ]);
  });

  it('says quiet days in a sentence, without charts or a table', async () => {
    render(CostPanel, { api: fakeApi({ 'GET /api/stats': { ...emptyReport(), daily: [threeDays()[0]] } }) });
    expect(await screen.findByText('Nothing in the last 1 day.')).toBeTruthy();
    expect(screen.queryByRole('table')).toBeNull();
    expect(screen.queryByText(/^Prompt read from/)).toBeNull();
  });

  it('shows tokens only and no share when nothing is priced and the cache went unreported', async () => {
    const r = costReport({ turns_cost_usd: null, injected_cost_usd: null, cache_read_share: null, cache_read_share_without_metaclaw: null });
    r.models = r.models.map((m) => ({ ...m, cost_usd: null, injected_cost_usd: null, price_source: null }));
    r.learning.by_purpose[1].model = null;
    const { container } = render(CostPanel, { api: fakeApi({ 'GET /api/stats': r }) });

    expect(await screen.findByText('412 turns in the last 24 hours: 5,210,344 tokens in, 48,211 out.')).toBeTruthy();
    expect(screen.getByText('The provider did not report its prompt cache.')).toBeTruthy();
    expect(screen.getByText('MetaClaw added 182,400 tokens.')).toBeTruthy();
    expect(within(screen.getByRole('table', { name: 'Per model' })).getAllByText('no price')).toHaveLength(2);
    expect(rows(screen.getByRole('table', { name: /^Learning per purpose/ }))[1][1]).toBe('—');
    expect(container.querySelector('[data-testid="cost-summary"]')?.textContent).not.toMatch(/%|at most/);
  });

  it('says an empty window in a sentence, without tables', async () => {
    render(CostPanel, { api: fakeApi({ 'GET /api/stats': emptyReport() }) });
    expect(await screen.findByText('No turns in the last 24 hours.')).toBeTruthy();
    expect(screen.getByText('Learning since 2026-12-03 (UTC): 0 calls.')).toBeTruthy();
    expect(screen.queryByRole('table')).toBeNull();
    expect(screen.queryByText(/No price/)).toBeNull();
  });

  it('says "Loading…" until the answer comes', async () => {
    let answer: (r: CostReport) => void = () => {};
    render(CostPanel, { api: fakeApi({ 'GET /api/stats': () => new Promise<CostReport>((r) => (answer = r)) }) });
    expect(screen.getByText('Loading…')).toBeTruthy();
    answer(emptyReport());
    expect(await screen.findByText('No turns in the last 24 hours.')).toBeTruthy();
    expect(screen.queryByText('Loading…')).toBeNull();
  });

  it("shows the engine's message when the report fails", async () => {
    const { fetch } = fetchRoutes({ 'GET /api/stats': reply(500, { error: { message: 'database is locked' } }) });
    render(CostPanel, { api: createApi({ fetch, token: () => 't' }) });
    expect((await screen.findByRole('alert')).textContent).toBe('database is locked');
    expect(screen.queryByText('Loading…')).toBeNull();
    expect(screen.queryByRole('table')).toBeNull();
  });

  it('reloads when the revision changes', async () => {
    let current = emptyReport();
    const api = fakeApi({ 'GET /api/stats': () => current });
    const { rerender } = render(CostPanel, { api, revision: 0 });
    expect(await screen.findByText('No turns in the last 24 hours.')).toBeTruthy();

    current = costReport({ turns: 1, input_tokens: 90, output_tokens: 7, turns_cost_usd: 0.0003 });
    await rerender({ revision: 1 });
    expect(await screen.findByText('1 turn in the last 24 hours: 90 tokens in, 7 out, $0.0003.')).toBeTruthy();
    expect(api.calls).toHaveLength(2);
  });
});
