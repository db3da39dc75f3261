// `/api/learning` answers for the Learning panel's tests.

import type { Learning, LearningStep } from '../src/lib/types';

export const T0 = 1_764_770_000_000;

export function step(n: number, mean_reward: number | null, loss: number | null = null): LearningStep {
  return {
    step: n,
    at_ms: T0 + n * 60_000,
    samples: 4,
    dropped: 0,
    mean_reward,
    loss,
    duration_ms: 800,
    sampler_path: `tinker://run/sampler_weights/step_${String(n).padStart(6, '0')}`,
    checkpoint_path: null,
    error: null,
  };
}

export function learning(over: Partial<Learning> = {}): Learning {
  return {
    mode: 'rl',
    active: true,
    backend: 'tinker',
    model: 'Qwen/Qwen3-4B',
    state: 'ready',
    serving: 'base model',
    training: false,
    step: 0,
    samples: { waiting: 5, unjudged: 2, held: 1, consumed: 12, dropped: 3 },
    judge_backlog: 2,
    served: { sampled: 40, fallback: 1 },
    last_error: null,
    last_checkpoint: null,
    steps: [],
    ...over,
  };
}
