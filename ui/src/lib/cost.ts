// `/api/stats?hours=N` → the Cost panel's sentences and table cells. Same figures and rules
// as the `usage:` lines of `metaclaw status`: tokens always, a cost only where the model has
// a price (a missing price is never guessed), a cache share only where the provider said.

import type { Api } from './api';
import type { CostReport } from './types';

export function loadCost(api: Api, hours = 24): Promise<CostReport> {
  return api.get<CostReport>('/api/stats', { hours });
}

function plural(n: number, one: string, many: string): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** "5,210,344": a fixed locale, so the sentences read the same everywhere (and in tests). */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** "$3.41"; four decimals under a cent, so a small cost does not read as $0.00. */
export function usd(c: number): string {
  const digits = c > 0 && c < 0.01 ? 4 : 2;
  return `$${c.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
}

/** A table cell: the cost, or "no price" (null is not zero). */
export function costCell(c: number | null): string {
  return c === null ? 'no price' : usd(c);
}

export function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

/** "the last 24 hours" / "the last hour". */
export function lastHours(hours: number): string {
  return hours === 1 ? 'the last hour' : `the last ${hours} hours`;
}

/** ", $3.41" when there is a cost; nothing when no model had a price. */
const withCost = (c: number | null) => (c === null ? '' : `, ${usd(c)}`);

/** "412 turns in the last 24 hours: 5,210,344 tokens in, 48,211 out, $3.41." */
export function turnsLine(r: CostReport): string {
  if (r.turns === 0) return `No turns in ${lastHours(r.hours)}.`;
  return `${plural(r.turns, 'turn', 'turns')} in ${lastHours(r.hours)}: ${count(r.input_tokens)} tokens in, ${count(r.output_tokens)} out${withCost(r.turns_cost_usd)}.`;
}

/** The prompt cache's share, with the estimate without MetaClaw's blocks when there is one. */
export function cacheLine(r: CostReport): string {
  if (r.cache_read_share === null) return 'The provider did not report its prompt cache.';
  const without = r.cache_read_share_without_metaclaw === null ? '' : ` (about ${percent(r.cache_read_share_without_metaclaw)} without MetaClaw's blocks)`;
  return `${percent(r.cache_read_share)} of the prompt was read from the provider's cache${without}.`;
}

/** "MetaClaw added 182,400 tokens, at most $0.55." (an upper bound: uncached input price). */
export function injectedLine(r: CostReport): string {
  const cost = r.injected_cost_usd === null ? '' : `, at most ${usd(r.injected_cost_usd)}`;
  return `MetaClaw added ${plural(r.injected_tokens, 'token', 'tokens')}${cost}.`;
}

/** "Learning since 2026-12-03 (UTC): 14 calls (1 failed), 61,020 tokens in, 5,210 out, $0.19."
 *  Learning is counted per UTC day, so the window starts at a day's start. */
export function learningLine(r: CostReport): string {
  const l = r.learning;
  const failed = l.failed > 0 ? ` (${count(l.failed)} failed)` : '';
  const tokens = l.calls > 0 ? `, ${count(l.input_tokens)} tokens in, ${count(l.output_tokens)} out` : '';
  return `Learning since ${l.since_day} (UTC): ${plural(l.calls, 'call', 'calls')}${failed}${tokens}${withCost(l.cost_usd)}.`;
}

/** The models and learning purposes counted as tokens only, or null when every one had a
 *  price. Prices are set in the config; the Settings screen does not offer them. */
export function unpricedLine(r: CostReport): string | null {
  const names = [...r.unpriced_models, ...r.learning.unpriced.map((p) => `${p} (learning)`)];
  if (names.length === 0) return null;
  return `No price for ${names.join(', ')}: shown as tokens only. Add ${names.length === 1 ? 'one' : 'them'} with \`metaclaw config set prices …\`.`;
}

/** The panel's sentences, in order. An empty window says so instead of the cache and
 *  MetaClaw lines, which would only repeat zeros. */
export function summary(r: CostReport): string[] {
  const lines = [turnsLine(r)];
  if (r.turns > 0) lines.push(cacheLine(r), injectedLine(r));
  lines.push(learningLine(r));
  const unpriced = unpricedLine(r);
  if (unpriced) lines.push(unpriced);
  return lines;
}
