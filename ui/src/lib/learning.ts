// `/api/learning` → the Learning panel's sentences, counts and chart columns. The charts
// draw over time (Chart.svelte's x axis is a time axis): x is when each step finished.

import type { Columns } from './series';
import type { Learning, LearningStep } from './types';

/** Engine events after which the panel reloads at once (it also polls while active). */
export const LEARNING_REFRESH_ON = ['training_finished', 'started'];

const STATE_WORDS: Record<string, string> = {
  off: 'off',
  connecting: 'connecting…',
  ready: 'ready',
  unavailable: 'unavailable',
};

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Two decimals: rewards sit in [-1, 1], so fewer would hide the trend. */
export function num(v: number): string {
  return v.toFixed(2);
}

/** The one line shown when weights are not being trained. */
export function offLine(l: Learning): string {
  return `Weight learning is off (mode ${l.mode}). Switch to rl or madmax in Settings.`;
}

function serving(s: string | null): string {
  if (s === null) return 'serving nothing yet (requests go to the upstream LLM)';
  if (s === 'base model') return 'serving the base model';
  return `serving ${s}`;
}

/** "Backend tinker (ready) · model Qwen/Qwen3-4B · serving the base model · idle after step 3". */
export function stateLine(l: Learning): string {
  const state = STATE_WORDS[l.state] ?? l.state;
  const backend = l.backend ? `Backend ${l.backend} (${state})` : `No backend configured (${state})`;
  const model = l.model ? `model ${l.model}` : 'no model configured';
  const work = l.training ? `training step ${l.step + 1} now` : l.step > 0 ? `idle after step ${l.step}` : 'idle';
  return [backend, model, serving(l.serving), work].join(' · ');
}

/** The last failure as a sentence, or null when there is none. */
export function errorLine(l: Learning): string | null {
  return l.last_error ? `Last error: ${l.last_error}` : null;
}

/** The counts, in the order the panel lists them. */
export function counts(l: Learning): { label: string; value: number }[] {
  return [
    { label: 'Samples waiting', value: l.samples.waiting },
    { label: 'Judge backlog', value: l.judge_backlog },
    { label: 'Held', value: l.samples.held },
    { label: 'Trained on', value: l.samples.consumed },
    { label: 'Dropped', value: l.samples.dropped },
    { label: 'Served by the trained model', value: l.served.sampled },
    { label: 'Sent to the upstream LLM (backend down)', value: l.served.fallback },
  ];
}

/** "No training step yet — 5 samples waiting (batch size decides when)". */
export function noStepsLine(l: Learning): string {
  return `No training step yet — ${plural(l.samples.waiting, 'sample', 'samples')} waiting (batch size decides when)`;
}

/** x (seconds, when each step finished) and mean reward; null where there is none. */
export function rewardColumns(steps: LearningStep[]): Columns {
  return [steps.map((s) => s.at_ms / 1000), steps.map((s) => s.mean_reward)];
}

/** x (seconds) and loss; null (a gap) where a step reported none. */
export function lossColumns(steps: LearningStep[]): Columns {
  return [steps.map((s) => s.at_ms / 1000), steps.map((s) => s.loss)];
}

/** "Mean reward rose from 0.10 at step 1 to 0.60 at step 8" (fell / stayed), over the first
 *  and last steps that have a value; `none` when no step has one. */
function trend(name: string, steps: LearningStep[], value: (s: LearningStep) => number | null, none: string): string {
  const known = steps.filter((s) => value(s) !== null);
  if (!known.length) return none;
  const first = known[0];
  const last = known[known.length - 1];
  const a = value(first) as number;
  const b = value(last) as number;
  if (first === last) return `${name} ${num(a)} at step ${first.step}`;
  if (num(a) === num(b)) return `${name} stayed at ${num(a)} from step ${first.step} to step ${last.step}`;
  return `${name} ${b > a ? 'rose' : 'fell'} from ${num(a)} at step ${first.step} to ${num(b)} at step ${last.step}`;
}

export function rewardSummary(steps: LearningStep[]): string {
  return trend('Mean reward', steps, (s) => s.mean_reward, 'No step has a mean reward yet');
}

export function lossSummary(steps: LearningStep[]): string {
  return trend('Loss', steps, (s) => s.loss, 'No step reported a loss yet');
}

/** The chart's value axis: signed (reaching below zero) when any value is negative —
 *  judge rewards run from −1 to 1 — else starting at zero like the other charts. */
export function axesFor(columns: Columns, scale: string, label: string): { scale: string; label: string; signed?: boolean }[] {
  const values = columns.slice(1).flat().filter((v): v is number => v !== null);
  return values.every((v) => v >= 0) ? [{ scale, label }] : [{ scale, label, signed: true }];
}
