import { describe, expect, it } from 'vitest';
import {
  addedColumns, cacheLine, costCell, count, dayStart, daysRange, daysSummary, injectedLine, learningLine, loadCost, shareCell, shareColumns, summary, turnsLine,
  unpricedLine, usd,
} from '../src/lib/cost';
import { fakeApi } from './helpers';
import { costReport, day, emptyReport, threeDays } from './costData';

describe('cost', () => {
  it('asks /api/stats for the window', async () => {
    const api = fakeApi({ 'GET /api/stats': costReport() });
    expect((await loadCost(api)).turns).toBe(412);
    await loadCost(api, 48);
    await loadCost(api, 24, 14);
    expect(api.calls.map((c) => c.params)).toEqual([{ hours: 24 }, { hours: 48 }, { hours: 24, days: 14 }]);
  });

  it('puts each day at its middle, shares in percent, and leaves a day without a cache figure empty', () => {
    const days = threeDays();
    const start = Date.UTC(2026, 11, 2) / 1000;
    expect(dayStart('2026-12-02')).toBe(start);
    expect(daysRange(days)).toEqual([start, start + 3 * 86_400]);
    const [x, share, without] = shareColumns(days);
    expect(x).toEqual([start + 43_200, start + 86_400 + 43_200, start + 2 * 86_400 + 43_200]);
    expect(share).toEqual([null, 80, 91.3]);
    expect(without.map((v) => (v === null ? null : Math.round(v * 10) / 10))).toEqual([null, 85, 91.6]);
    expect(addedColumns(days).slice(1)).toEqual([[0, 9_000, 182_400], [0, 4_000, 66_230]]);
    expect(shareCell(null)).toBe('—');
    expect(shareCell(0)).toBe('0.0%');
  });

  it('says the days in one sentence: the share range, what injection and learning added', () => {
    expect(daysSummary(threeDays())).toBe(
      "Over the last 3 days: the cache served 80.0% to 91.3% of the prompt a day (about 85.0% to 91.6% without MetaClaw's blocks); MetaClaw added 191,400 tokens, at most $0.55; learning made 16 calls, $0.19.",
    );
    expect(daysSummary([day({ cache_read_share: null, cache_read_share_without_metaclaw: null, injected_cost_usd: null, learning_cost_usd: null, learning_calls: 1 })])).toBe(
      'Over the last 1 day: the provider did not report its prompt cache; MetaClaw added 182,400 tokens; learning made 1 call.',
    );
    expect(daysSummary([threeDays()[0]])).toBe('Nothing in the last 1 day.');
  });

  it('gives costs two decimals, four under a cent, and no figure for a missing price', () => {
    expect(usd(3.41)).toBe('$3.41');
    expect(usd(1234.5)).toBe('$1,234.50');
    expect(usd(0.01)).toBe('$0.01');
    expect(usd(0.0031)).toBe('$0.0031');
    expect(usd(0)).toBe('$0.00');
    expect(costCell(0.19)).toBe('$0.19');
    expect(costCell(0)).toBe('$0.00');
    expect(costCell(null)).toBe('no price');
    expect(count(5_210_344)).toBe('5,210,344');
  });

  it('says the turns with their tokens and cost, and leaves out a cost that is null', () => {
    expect(turnsLine(costReport())).toBe('412 turns in the last 24 hours: 5,210,344 tokens in, 48,211 out, $3.41.');
    expect(turnsLine(costReport({ turns: 1, input_tokens: 12, output_tokens: 1, turns_cost_usd: null }))).toBe(
      '1 turn in the last 24 hours: 12 tokens in, 1 out.',
    );
    expect(turnsLine(costReport({ turns_cost_usd: 0.004 }))).toMatch(/, \$0\.0040\.$/);
    expect(turnsLine(costReport({ hours: 1 }))).toMatch(/^412 turns in the last hour: /);
    expect(turnsLine(emptyReport())).toBe('No turns in the last 24 hours.');
  });

  it('gives the cache share with the estimate without MetaClaw, and no share the provider did not report', () => {
    expect(cacheLine(costReport())).toBe("91.3% of the prompt was read from the provider's cache (about 91.6% without MetaClaw's blocks).");
    expect(cacheLine(costReport({ cache_read_share_without_metaclaw: null }))).toBe("91.3% of the prompt was read from the provider's cache.");
    expect(cacheLine(costReport({ cache_read_share: 0 }))).toMatch(/^0\.0% of the prompt/);
    expect(cacheLine(costReport({ cache_read_share: null, cache_read_share_without_metaclaw: null }))).toBe('The provider did not report its prompt cache.');
  });

  it('says what MetaClaw added, with its cost as an upper bound only when priced', () => {
    expect(injectedLine(costReport())).toBe('MetaClaw added 182,400 tokens, at most $0.55.');
    expect(injectedLine(costReport({ injected_cost_usd: 0.0012 }))).toBe('MetaClaw added 182,400 tokens, at most $0.0012.');
    expect(injectedLine(costReport({ injected_tokens: 1, injected_cost_usd: null }))).toBe('MetaClaw added 1 token.');
  });

  it("says learning's calls since the first UTC day of the window", () => {
    expect(learningLine(costReport())).toBe('Learning since 2026-12-03 (UTC): 14 calls (1 failed), 61,020 tokens in, 5,210 out, $0.19.');
    const one = costReport();
    one.learning = { ...one.learning, calls: 1, failed: 0, input_tokens: 300, output_tokens: 20, cost_usd: null };
    expect(learningLine(one)).toBe('Learning since 2026-12-03 (UTC): 1 call, 300 tokens in, 20 out.');
    expect(learningLine(emptyReport())).toBe('Learning since 2026-12-03 (UTC): 0 calls.');
  });

  it('names the models and learning purposes without a price', () => {
    expect(unpricedLine(costReport())).toBe(
      'No price for local-llama, embeddings (learning): shown as tokens only. Add them in Settings, Prices.',
    );
    const one = costReport();
    one.learning = { ...one.learning, unpriced: [] };
    expect(unpricedLine(one)).toBe('No price for local-llama: shown as tokens only. Add one in Settings, Prices.');
    expect(unpricedLine(emptyReport())).toBeNull();
  });

  it('puts the sentences in order, and an empty window in two', () => {
    expect(summary(costReport())).toEqual([
      '412 turns in the last 24 hours: 5,210,344 tokens in, 48,211 out, $3.41.',
      "91.3% of the prompt was read from the provider's cache (about 91.6% without MetaClaw's blocks).",
      'MetaClaw added 182,400 tokens, at most $0.55.',
      'Learning since 2026-12-03 (UTC): 14 calls (1 failed), 61,020 tokens in, 5,210 out, $0.19.',
      'No price for local-llama, embeddings (learning): shown as tokens only. Add them in Settings, Prices.',
    ]);
    expect(summary(emptyReport())).toEqual(['No turns in the last 24 hours.', 'Learning since 2026-12-03 (UTC): 0 calls.']);
  });
});
