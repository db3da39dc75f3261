// `/api/effect` answers for the effect tests: a 30-day window with a flagged skill, a quiet
// one, a memory, and a holdout at 20% with enough labelled turns for a verdict.

import type { Arm, EffectReport, Holdout, ItemEffect, Outcome } from '../src/lib/effect';

export function outcome(over: Partial<Outcome> = {}): Outcome {
  return {
    turns: 412,
    block_tokens: 182_400,
    labelled: 250,
    corrections: 15,
    repeats: 5,
    thanks: 0,
    retries: 0,
    errors: 2,
    correction_rate: 0.08,
    thanks_rate: 0,
    judged: 0,
    mean_reward: null,
    ...over,
  };
}

export function item(over: Partial<ItemEffect> = {}): ItemEffect {
  return {
    ...outcome({ turns: 42, block_tokens: 3_100, labelled: 25, corrections: 2, repeats: 1, errors: 0, correction_rate: 0.12 }),
    item: 'debug-failing-tests',
    without_rate: 0.05,
    flag: null,
    ...over,
  };
}

export const FLAG = 'Followed by a correction 40% of the time (10 of 25), against 5% without it.';

export function arm(over: Partial<Arm> = {}): Arm {
  return { ...outcome(), sessions: 30, ...over };
}

export function holdout(over: Partial<Holdout> = {}): Holdout {
  return {
    share: 0.2,
    with: arm({ sessions: 40, turns: 330, labelled: 200, corrections: 12, repeats: 4, thanks: 50, thanks_rate: 0.25, errors: 1, correction_rate: 0.08 }),
    without: arm({ sessions: 9, turns: 82, labelled: 50, corrections: 6, repeats: 1, retries: 2, errors: 1, correction_rate: 0.14, judged: 3, mean_reward: 0.4251 }),
    verdict: 'Held-out turns were corrected or asked again more often (14% against 8%).',
    ...over,
  };
}

export function effectReport(over: Partial<EffectReport> = {}): EffectReport {
  return {
    days: 30,
    min_sample: 20,
    baseline: outcome(),
    skills: [
      item({ item: 'debug-failing-tests', corrections: 9, repeats: 1, correction_rate: 0.4, flag: FLAG }),
      item({ item: 'tidy-commits', turns: 3, block_tokens: 240, labelled: 0, corrections: 0, repeats: 0, correction_rate: null, without_rate: 0.08 }),
    ],
    memories: [item({ item: '01HMEMORY', turns: 7, block_tokens: 560, labelled: 4, corrections: 1, repeats: 0, correction_rate: 0.25, without_rate: 0.08 })],
    holdout: holdout(),
    ...over,
  };
}
