import { describe, expect, it } from 'vitest';
import {
  axesFor,
  counts,
  errorLine,
  lossColumns,
  lossSummary,
  noStepsLine,
  offLine,
  rewardColumns,
  rewardSummary,
  stateLine,
} from '../src/lib/learning';
import { learning, step, T0 } from './learningData';

describe('learning', () => {
  it('says weight learning is off in skills_only mode', () => {
    expect(offLine(learning({ mode: 'skills_only', active: false, backend: null, state: 'off' }))).toBe(
      'Weight learning is off (mode skills_only). Switch to rl or madmax in Settings.',
    );
  });

  it('puts backend, model, serving and training in one state line', () => {
    expect(stateLine(learning())).toBe('Backend tinker (ready) · model Qwen/Qwen3-4B · serving the base model · idle');
    expect(stateLine(learning({ step: 3, serving: 'tinker://run/sampler_weights/step_000003' }))).toBe(
      'Backend tinker (ready) · model Qwen/Qwen3-4B · serving tinker://run/sampler_weights/step_000003 · idle after step 3',
    );
    expect(stateLine(learning({ step: 3, training: true, state: 'ready' }))).toContain('training step 4 now');
    expect(stateLine(learning({ backend: null, model: '', state: 'unavailable', serving: null }))).toBe(
      'No backend configured (unavailable) · no model configured · serving nothing yet (requests go to the upstream LLM) · idle',
    );
    expect(stateLine(learning({ backend: 'weaver', state: 'connecting' }))).toMatch(/^Backend weaver \(connecting…\)/);
  });

  it('gives the last error as a line only when there is one', () => {
    expect(errorLine(learning())).toBeNull();
    expect(errorLine(learning({ last_error: 'sampler refused the request (HTTP 503)' }))).toBe(
      'Last error: sampler refused the request (HTTP 503)',
    );
  });

  it('lists the counts from samples, judge backlog and served', () => {
    expect(counts(learning()).map((c) => [c.label, c.value])).toEqual([
      ['Samples waiting', 5],
      ['Judge backlog', 2],
      ['Held', 1],
      ['Trained on', 12],
      ['Dropped', 3],
      ['Served by the trained model', 40],
      ['Sent to the upstream LLM (backend down)', 1],
    ]);
  });

  it('says how many samples wait when no step ran yet', () => {
    expect(noStepsLine(learning())).toBe('No training step yet — 5 samples waiting (batch size decides when)');
    expect(noStepsLine(learning({ samples: { waiting: 1, unjudged: 0, held: 0, consumed: 0, dropped: 0 } }))).toBe(
      'No training step yet — 1 sample waiting (batch size decides when)',
    );
    expect(rewardSummary([])).toBe('No step has a mean reward yet');
    expect(lossSummary([])).toBe('No step reported a loss yet');
    expect(rewardColumns([])).toEqual([[], []]);
  });

  it('summarises a rising, falling, flat and single-step mean reward', () => {
    const rising = [step(1, 0.1), step(2, -0.25), step(8, 0.6)];
    expect(rewardSummary(rising)).toBe('Mean reward rose from 0.10 at step 1 to 0.60 at step 8');
    expect(rewardSummary([step(2, 0.5), step(5, -0.5)])).toBe('Mean reward fell from 0.50 at step 2 to -0.50 at step 5');
    expect(rewardSummary([step(1, 0.5), step(2, 0.501)])).toBe('Mean reward stayed at 0.50 from step 1 to step 2');
    expect(rewardSummary([step(4, 0.25)])).toBe('Mean reward 0.25 at step 4');
    expect(rewardColumns(rising)).toEqual([[T0 / 1000 + 60, T0 / 1000 + 120, T0 / 1000 + 480], [0.1, -0.25, 0.6]]);
  });

  it('leaves steps without a loss as gaps and summarises over the ones with one', () => {
    const steps = [step(1, 0.1, null), step(2, 0.2, 1.23), step(3, 0.3, null), step(4, 0.4, 0.8), step(5, 0.5, null)];
    expect(lossColumns(steps)[1]).toEqual([null, 1.23, null, 0.8, null]);
    expect(lossSummary(steps)).toBe('Loss fell from 1.23 at step 2 to 0.80 at step 4');
    expect(lossSummary([step(1, 0.1, null), step(2, 0.2, null)])).toBe('No step reported a loss yet');
    expect(rewardSummary([step(1, null), step(2, 0.3), step(3, null)])).toBe('Mean reward 0.30 at step 2');
  });

  it('gives a series that goes negative a signed value axis', () => {
    expect(axesFor(rewardColumns([step(1, 0.1), step(2, 0.6)]), 'reward', 'reward')).toEqual([{ scale: 'reward', label: 'reward' }]);
    expect(axesFor(rewardColumns([step(1, -0.1), step(2, 0.6)]), 'reward', 'reward')).toEqual([{ scale: 'reward', label: 'reward', signed: true }]);
    expect(axesFor(lossColumns([step(1, 0, null), step(2, 0, 1.5)]), 'loss', 'loss')).toHaveLength(1);
  });
});
