// `/api/effect?days=N` → what MetaClaw's learning did for the user: per skill and memory, the
// answers that followed the turns carrying it, and the holdout (sessions served without
// MetaClaw's block) beside the rest. Every figure is also said in a sentence; a rate over too
// few labelled turns is shown with its counts, and the API alone decides a flag or a verdict.

import type { Api } from './api';
import { count } from './cost';

/** What followed a set of main turns. */
export interface Outcome {
  turns: number;
  /** Tokens of MetaClaw's injected block on those turns. */
  block_tokens: number;
  /** Turns already followed by the user's next message. */
  labelled: number;
  /** Of `labelled`: the next message corrected the answer. */
  corrections: number;
  /** Of `labelled`: the user asked the same again. */
  repeats: number;
  /** Of `labelled`: the user said it worked ("thanks", "perfect"). */
  thanks: number;
  /** Turns the agent sent again unchanged (a retry after an error or a timeout). */
  retries: number;
  /** Turns that failed (status >= 400). */
  errors: number;
  /** (corrections + repeats) / labelled; null when nothing is labelled. */
  correction_rate: number | null;
  /** thanks / labelled; null when nothing is labelled. */
  thanks_rate: number | null;
  /** Turns with a judge score (rl and madmax modes only). */
  judged: number;
  mean_reward: number | null;
}

/** One skill (by name) or memory (by id). */
export interface ItemEffect extends Outcome {
  item: string;
  /** The same rate over the labelled main turns without this item. */
  without_rate: number | null;
  /** Why the skill is flagged, as a sentence; only skills are flagged. */
  flag: string | null;
}

export interface Arm extends Outcome {
  sessions: number;
}

export interface Holdout {
  /** `learning.holdout`: the share of sessions served without the block; 0 = off. */
  share: number;
  /** Sessions that could get MetaClaw's block. */
  with: Arm;
  /** Held-out sessions: no block was injected. */
  without: Arm;
  /** Set only when both arms have at least `min_sample` labelled turns. */
  verdict: string | null;
}

export interface EffectReport {
  days: number;
  /** Below this many labelled turns per side there is no claim and no flag. */
  min_sample: number;
  /** Every main turn of the window. */
  baseline: Outcome;
  /** Most carried first. */
  skills: ItemEffect[];
  memories: ItemEffect[];
  holdout: Holdout;
}

/** The window every screen asks for. */
export const EFFECT_DAYS = 30;

export function getEffect(api: Api, days = EFFECT_DAYS): Promise<EffectReport> {
  return api.get<EffectReport>('/api/effect', { days });
}

function plural(n: number, one: string, many: string): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** "12%", or "—" when there is no rate (nothing labelled is not 0%). */
export function rateText(rate: number | null): string {
  return rate === null ? '—' : `${Math.round(rate * 100)}%`;
}

/** "12 (25%)": the corrected or repeated answers with their rate, for a table cell. */
export function correctedCell(o: Outcome): string {
  return `${count(o.corrections + o.repeats)} (${rateText(o.correction_rate)})`;
}

/** "5 (20%)": the answers the user said worked, with their rate, for a table cell. */
export function thanksCell(o: Outcome): string {
  return `${count(o.thanks)} (${rateText(o.thanks_rate)})`;
}

/** "2 / 1": failed turns and the agent's retries, for a table cell. */
export function troubleCell(o: Outcome): string {
  return `${count(o.errors)} / ${count(o.retries)}`;
}

/** The mean judge score, or "—" when no turn was judged. */
export function judgeCell(o: Outcome): string {
  return o.mean_reward === null ? '—' : o.mean_reward.toFixed(2);
}

/** "the last 30 days" / "the last day". */
function lastDays(days: number): string {
  return days === 1 ? 'the last day' : `the last ${days} days`;
}

/** "once", "42 times". */
function times(n: number): string {
  return n === 1 ? 'once' : `${count(n)} times`;
}

/** The list's short figure: "used 42×". */
export function usedText(e: ItemEffect): string {
  return `used ${count(e.turns)}×`;
}

/** "Injected 42 times in the last 30 days (3,100 block tokens); 12% of the answers that
 *  followed were corrected or asked again (3 of 25), against 5% without it." */
export function itemSentence(e: ItemEffect, days = EFFECT_DAYS): string {
  const head = `Injected ${times(e.turns)} in ${lastDays(days)} (${plural(e.block_tokens, 'block token', 'block tokens')})`;
  const failed =
    (e.errors > 0 ? ` ${count(e.errors)} of those turns failed.` : '') +
    (e.retries > 0 ? ` The agent sent ${e.retries === 1 ? 'one' : count(e.retries)} again.` : '');
  if (e.labelled === 0) return `${head}; no answer followed yet.${failed}`;
  const against = e.without_rate === null ? '' : `, against ${rateText(e.without_rate)} without it`;
  const counts = `${count(e.corrections + e.repeats)} of ${count(e.labelled)}`;
  const thanked = e.thanks > 0 ? ` The user said it worked after ${count(e.thanks)}.` : '';
  return `${head}; ${rateText(e.correction_rate)} of the answers that followed were corrected or asked again (${counts})${against}.${thanked}${failed}`;
}

/** The sentence for an item that no turn of the window carried. */
export function notInjected(days = EFFECT_DAYS): string {
  return `Not injected in ${lastDays(days)}.`;
}

/** The item's figures in the report, if any turn carried it. */
export function skillEffect(r: EffectReport, name: string): ItemEffect | undefined {
  return r.skills.find((e) => e.item === name);
}

export function memoryEffect(r: EffectReport, id: string): ItemEffect | undefined {
  return r.memories.find((e) => e.item === id);
}

/** Off: how to turn it on. Too few labelled turns: how far each side is, and no claim.
 *  Otherwise the API's verdict. */
export function holdoutSentence(h: Holdout, minSample: number): string {
  if (h.share <= 0) {
    return (
      "The holdout is off, so turns with and without MetaClaw's block are not compared. " +
      'To turn it on, set learning.holdout between 0 and 0.5 in Settings, or run `metaclaw config set learning.holdout 0.1`.'
    );
  }
  if (h.verdict === null) {
    return (
      `${rateText(h.share)} of sessions are held out (served without MetaClaw's block). ` +
      `So far ${count(h.with.labelled)} labelled turns with MetaClaw and ${count(h.without.labelled)} held out, ` +
      `of the ${count(minSample)} each side needs; no comparison is claimed yet.`
    );
  }
  return h.verdict;
}

/** "412 main turns; 8% of the answers the user followed up on were corrected or asked again
 *  (20 of 250)." */
export function overallSentence(b: Outcome, days = EFFECT_DAYS): string {
  if (b.turns === 0) return `No main turns in ${lastDays(days)}.`;
  const turns = plural(b.turns, 'main turn', 'main turns');
  if (b.labelled === 0) return `${turns}; the user has not followed up on any answer yet.`;
  return `${turns}; ${rateText(b.correction_rate)} of the answers the user followed up on were corrected or asked again (${count(b.corrections + b.repeats)} of ${count(b.labelled)}).`;
}
