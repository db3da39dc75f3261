// `/api/stats` answers for the Cost panel's tests: the README's example window.

import type { CostReport, DayCost, ModelCost, PurposeCost } from '../src/lib/types';

export function model(over: Partial<ModelCost> = {}): ModelCost {
  return {
    model: 'claude-sonnet-4-5',
    turns: 400,
    turns_with_usage: 400,
    input_tokens: 5_000_000,
    output_tokens: 45_000,
    cache_read_tokens: 4_570_000,
    cache_write_tokens: 120_000,
    cache_reported_input_tokens: 5_000_000,
    cache_reported_injected_tokens: 180_000,
    cache_reported_block_tokens: 9_000,
    injected_tokens: 180_000,
    block_tokens: 9_000,
    price_source: 'built_in',
    cost_usd: 3.41,
    injected_cost_usd: 0.54,
    ...over,
  };
}

export function purpose(over: Partial<PurposeCost> = {}): PurposeCost {
  return { purpose: 'evolution', model: 'gpt-4o-mini', calls: 10, failed: 1, input_tokens: 50_000, output_tokens: 4_000, cost_usd: 0.19, ...over };
}

export function costReport(over: Partial<CostReport> = {}): CostReport {
  return {
    hours: 24,
    turns: 412,
    input_tokens: 5_210_344,
    output_tokens: 48_211,
    cache_read_tokens: 4_570_000,
    cache_write_tokens: 120_000,
    cache_read_share: 0.913,
    cache_read_share_without_metaclaw: 0.916,
    injected_tokens: 182_400,
    injected_cost_usd: 0.55,
    turns_cost_usd: 3.41,
    unpriced_models: ['local-llama'],
    models: [
      model(),
      model({ model: 'local-llama', turns: 12, input_tokens: 210_344, output_tokens: 3_211, cache_read_tokens: 0, cache_write_tokens: 0, injected_tokens: 2_400, price_source: null, cost_usd: null, injected_cost_usd: null }),
    ],
    learning: {
      since_day: '2026-12-03',
      calls: 14,
      failed: 1,
      input_tokens: 61_020,
      output_tokens: 5_210,
      cost_usd: 0.19,
      unpriced: ['embeddings'],
      by_purpose: [
        purpose({ purpose: 'embeddings', model: 'local-embed', calls: 4, failed: 0, input_tokens: 11_020, output_tokens: 1_210, cost_usd: null }),
        purpose(),
      ],
    },
    daily: [],
    ...over,
  };
}

export function day(over: Partial<DayCost> = {}): DayCost {
  return {
    day: '2026-12-04',
    turns: 412,
    cache_read_share: 0.913,
    cache_read_share_without_metaclaw: 0.916,
    injected_tokens: 182_400,
    injected_cost_usd: 0.55,
    turns_cost_usd: 3.41,
    learning_calls: 14,
    learning_tokens: 66_230,
    learning_cost_usd: 0.19,
    ...over,
  };
}

/** Three days: a quiet one, one whose provider said nothing of its cache, and today. */
export function threeDays(): DayCost[] {
  return [
    day({ day: '2026-12-02', turns: 0, cache_read_share: null, cache_read_share_without_metaclaw: null, injected_tokens: 0, injected_cost_usd: null, turns_cost_usd: null, learning_calls: 0, learning_tokens: 0, learning_cost_usd: null }),
    day({ day: '2026-12-03', turns: 30, cache_read_share: 0.8, cache_read_share_without_metaclaw: 0.85, injected_tokens: 9_000, injected_cost_usd: null, learning_calls: 2, learning_tokens: 4_000, learning_cost_usd: null }),
    day(),
  ];
}

/** A window without a turn or a learning call. */
export function emptyReport(): CostReport {
  return costReport({
    turns: 0,
    input_tokens: 0,
    output_tokens: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cache_read_share: null,
    cache_read_share_without_metaclaw: null,
    injected_tokens: 0,
    injected_cost_usd: null,
    turns_cost_usd: null,
    unpriced_models: [],
    models: [],
    learning: { since_day: '2026-12-03', calls: 0, failed: 0, input_tokens: 0, output_tokens: 0, cost_usd: null, unpriced: [], by_purpose: [] },
  });
}
