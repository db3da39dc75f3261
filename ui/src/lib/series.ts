// `/api/stats/series` → chart columns (uPlot's [x, ...ys] arrays, x in seconds) and the
// sentence that stands in for the charts for screen readers.

export interface RequestBucket {
  t_ms: number;
  count: number;
  errors: number;
  overhead_p50_ms: number | null;
  overhead_p95_ms: number | null;
}

export interface TotalPoint {
  t_ms: number;
  total: number;
}

export interface Series {
  from_ms: number;
  to_ms: number;
  bucket_ms: number;
  requests: RequestBucket[];
  skills: TotalPoint[];
  memories: TotalPoint[];
}

export interface ChartLine {
  label: string;
  /** A CSS variable name, e.g. `--accent`, read when the chart is drawn. */
  color: string;
  scale?: string;
  bars?: boolean;
  unit?: string;
}

export type Columns = [number[], ...(number | null)[][]];

export const RANGES = [
  { hours: 24, buckets: 24, label: '24 hours' },
  { hours: 168, buckets: 28, label: '7 days' },
] as const;

/** x (seconds, the middle of each bucket), requests, errors, p50 overhead (ms; null where a
 *  bucket had no request). */
export function requestColumns(s: Series): Columns {
  const r = s.requests;
  return [r.map((b) => (b.t_ms + s.bucket_ms / 2) / 1000), r.map((b) => b.count), r.map((b) => b.errors), r.map((b) => b.overhead_p50_ms)];
}

/** x (seconds, the end of each bucket: a total is what existed then), skills total,
 *  memories total. */
export function totalsColumns(s: Series): Columns {
  const times = (s.skills.length >= s.memories.length ? s.skills : s.memories).map((p) => p.t_ms);
  const at = (points: TotalPoint[]) => {
    const by = new Map(points.map((p) => [p.t_ms, p.total]));
    return times.map((t) => by.get(t) ?? null);
  };
  return [times.map((t) => (t + s.bucket_ms) / 1000), at(s.skills), at(s.memories)];
}

/** The x range (seconds) the series covers. */
export function xRange(s: Series): [number, number] {
  return [s.from_ms / 1000, s.to_ms / 1000];
}

/** The median of the requests' per-bucket p50s, weighted by each bucket's count. */
export function medianOverhead(s: Series): number | null {
  const points = s.requests
    .filter((b) => b.overhead_p50_ms !== null && b.count > 0)
    .map((b) => ({ v: b.overhead_p50_ms as number, n: b.count }))
    .sort((a, b) => a.v - b.v);
  const total = points.reduce((n, p) => n + p.n, 0);
  if (!total) return null;
  let seen = 0;
  for (const p of points) {
    seen += p.n;
    if (seen * 2 >= total) return p.v;
  }
  return null;
}

function ms(v: number): string {
  return v < 10 ? `${Number(v.toFixed(1))} ms` : `${Math.round(v)} ms`;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function rangeLabel(hours: number): string {
  return hours % 24 === 0 && hours > 24 ? `${hours / 24} days` : `${hours} hours`;
}

/** "12 requests in the last 24 hours, median overhead 0.8 ms" (+ errors when any). */
export function requestSummary(s: Series, hours: number): string {
  const count = s.requests.reduce((n, b) => n + b.count, 0);
  const errors = s.requests.reduce((n, b) => n + b.errors, 0);
  let text = `${plural(count, 'request', 'requests')} in the last ${rangeLabel(hours)}`;
  if (errors) text += ` (${plural(errors, 'error', 'errors')})`;
  const m = medianOverhead(s);
  text += m === null ? ', no overhead measured' : `, median overhead ${ms(m)}`;
  return text;
}

/** "Skills: 4 (up 2); memories: 31 (up 5) over the last 7 days". */
export function totalsSummary(s: Series, hours: number): string {
  const part = (name: string, points: TotalPoint[]) => {
    if (!points.length) return `${name}: none`;
    const last = points[points.length - 1].total;
    const diff = last - points[0].total;
    return `${name}: ${last}${diff ? ` (${diff > 0 ? 'up' : 'down'} ${Math.abs(diff)})` : ''}`;
  };
  return `${part('Skills', s.skills)}; ${part('memories', s.memories)} over the last ${rangeLabel(hours)}`;
}
