import { describe, expect, it } from 'vitest';
import { medianOverhead, requestColumns, requestSummary, totalsColumns, totalsSummary, type Series } from '../src/lib/series';

const H = 3_600_000;
const T0 = 1_764_720_000_000;

function series(): Series {
  return {
    from_ms: T0,
    to_ms: T0 + 3 * H,
    bucket_ms: H,
    requests: [
      { t_ms: T0, count: 10, errors: 0, overhead_p50_ms: 0.8, overhead_p95_ms: 2 },
      { t_ms: T0 + H, count: 0, errors: 0, overhead_p50_ms: null, overhead_p95_ms: null },
      { t_ms: T0 + 2 * H, count: 2, errors: 1, overhead_p50_ms: 5, overhead_p95_ms: 9 },
    ],
    skills: [
      { t_ms: T0, total: 3 },
      { t_ms: T0 + H, total: 3 },
      { t_ms: T0 + 2 * H, total: 5 },
    ],
    memories: [
      { t_ms: T0, total: 40 },
      { t_ms: T0 + H, total: 41 },
      { t_ms: T0 + 2 * H, total: 39 },
    ],
  };
}

describe('series', () => {
  it('turns buckets into chart columns (x in seconds: mid-bucket for requests, bucket end for totals) with gaps as null', () => {
    expect(requestColumns(series())).toEqual([
      [T0 / 1000 + 1800, T0 / 1000 + 5400, T0 / 1000 + 9000],
      [10, 0, 2],
      [0, 0, 1],
      [0.8, null, 5],
    ]);
    expect(totalsColumns(series())).toEqual([
      [T0 / 1000 + 3600, T0 / 1000 + 7200, T0 / 1000 + 10800],
      [3, 3, 5],
      [40, 41, 39],
    ]);
  });

  it('weights the median overhead by request count', () => {
    expect(medianOverhead(series())).toBe(0.8);
    const s = series();
    s.requests[0].count = 1;
    expect(medianOverhead(s)).toBe(5);
    s.requests.forEach((b) => (b.overhead_p50_ms = null));
    expect(medianOverhead(s)).toBeNull();
  });

  it('says the charts in a sentence', () => {
    expect(requestSummary(series(), 24)).toBe('12 requests in the last 24 hours (1 error), median overhead 0.8 ms');
    const quiet = series();
    quiet.requests = quiet.requests.map((b) => ({ ...b, count: 0, errors: 0, overhead_p50_ms: null }));
    expect(requestSummary(quiet, 168)).toBe('0 requests in the last 7 days, no overhead measured');
    expect(totalsSummary(series(), 24)).toBe('Skills: 5 (up 2); memories: 39 (down 1) over the last 24 hours');
  });
});
