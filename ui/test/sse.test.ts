import { describe, expect, it } from 'vitest';
import { parseSse } from '../src/lib/sse';

describe('parseSse', () => {
  it('splits complete events and keeps the unfinished rest', () => {
    const { events, rest } = parseSse('event: snapshot\ndata: {"a":1}\n\ndata: x\ndata: y\n\nevent: par');
    expect(events).toEqual([
      { event: 'snapshot', data: '{"a":1}' },
      { event: 'message', data: 'x\ny' },
    ]);
    expect(rest).toBe('event: par');
  });

  it('ignores comments and accepts CRLF', () => {
    expect(parseSse(':ping\r\n\r\nevent: resumed\r\ndata:{}\r\n\r\n').events).toEqual([{ event: 'resumed', data: '{}' }]);
  });
});
