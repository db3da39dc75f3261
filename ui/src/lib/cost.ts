// `/api/stats?hours=N` → the Cost panel's sentences and table cells. Same figures and rules
// as the `usage:` lines of `metaclaw status`: tokens always, a cost only where the model has
// a price (a missing price is never guessed), a cache share only where the provider said.

import type { Api } from './api';
import type { Columns } from './series';
import type { CostReport, DayCost } from './types';

/** The window's report and, with `days`, the figures of each of the last `days` UTC days. */
export function loadCost(api: Api, hours = 24, days = 0): Promise<CostReport> {
  return api.get<CostReport>('/api/stats', days > 0 ? { hours, days } : { hours });
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
 *  price. Prices are set in Settings or the config. */
export function unpricedLine(r: CostReport): string | null {
  const names = [...r.unpriced_models, ...r.learning.unpriced.map((p) => `${p} (learning)`)];
  if (names.length === 0) return null;
  return `No price for ${names.join(', ')}: shown as tokens only. Add ${names.length === 1 ? 'one' : 'them'} in Settings, Prices.`;
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

const DAY_S = 86_400;

/** Seconds at the start of a `YYYY-MM-DD` UTC day. */
export function dayStart(day: string): number {
  return Date.parse(`${day}T00:00:00Z`) / 1000;
}

/** The charts' x range: the first day's start to the last day's end. */
export function daysRange(daily: DayCost[]): [number, number] {
  if (daily.length === 0) return [0, DAY_S];
  return [dayStart(daily[0].day), dayStart(daily[daily.length - 1].day) + DAY_S];
}

const pct = (share: number | null) => (share === null ? null : share * 100);
const mid = (d: DayCost) => dayStart(d.day) + DAY_S / 2;

/** x (the middle of each day), cache-read share %, the share without MetaClaw's blocks %
 *  (null where the provider reported no cache that day). */
export function shareColumns(daily: DayCost[]): Columns {
  return [daily.map(mid), daily.map((d) => pct(d.cache_read_share)), daily.map((d) => pct(d.cache_read_share_without_metaclaw))];
}

/** x, tokens MetaClaw injected, tokens learning spent (in and out). */
export function addedColumns(daily: DayCost[]): Columns {
  return [daily.map(mid), daily.map((d) => d.injected_tokens), daily.map((d) => d.learning_tokens)];
}

/** A cell for a share that may be missing: "no cache reported" is not 0%. */
export function shareCell(share: number | null): string {
  return share === null ? '—' : percent(share);
}

function sumCost(costs: (number | null)[]): number | null {
  return costs.every((c) => c === null) ? null : costs.reduce<number>((a, c) => a + (c ?? 0), 0);
}

/** The days in one sentence: the cache share's range with and without MetaClaw's blocks, and
 *  what injection and learning added. */
export function daysSummary(daily: DayCost[]): string {
  const n = daily.length;
  const active = daily.filter((d) => d.turns > 0 || d.learning_calls > 0);
  if (active.length === 0) return `Nothing in the last ${plural(n, 'day', 'days')}.`;
  const range = (shares: (number | null)[]) => {
    const known = shares.filter((s): s is number => s !== null);
    if (known.length === 0) return null;
    const lo = Math.min(...known);
    const hi = Math.max(...known);
    return lo === hi ? percent(lo) : `${percent(lo)} to ${percent(hi)}`;
  };
  const withBlocks = range(daily.map((d) => d.cache_read_share));
  const without = range(daily.map((d) => d.cache_read_share_without_metaclaw));
  const cache =
    withBlocks === null
      ? 'the provider did not report its prompt cache'
      : `the cache served ${withBlocks} of the prompt a day${without === null ? '' : ` (about ${without} without MetaClaw's blocks)`}`;
  const injected = daily.reduce((a, d) => a + d.injected_tokens, 0);
  const injectedCost = sumCost(daily.map((d) => d.injected_cost_usd));
  const calls = daily.reduce((a, d) => a + d.learning_calls, 0);
  const learningCost = sumCost(daily.map((d) => d.learning_cost_usd));
  const atMost = injectedCost === null ? '' : `, at most ${usd(injectedCost)}`;
  return `Over the last ${plural(n, 'day', 'days')}: ${cache}; MetaClaw added ${plural(injected, 'token', 'tokens')}${atMost}; learning made ${plural(calls, 'call', 'calls')}${withCost(learningCost)}.`;
}
