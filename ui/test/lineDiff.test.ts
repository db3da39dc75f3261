import { describe, expect, it } from 'vitest';
import { lineDiff } from '../src/lib/lineDiff';

const show = (before: string, after: string) =>
  lineDiff(before, after).map((l) => `${l.op === 'add' ? '+' : l.op === 'del' ? '-' : ' '}${l.text}`);

describe('lineDiff', () => {
  it('keeps common lines and marks what was removed and added', () => {
    expect(show('# Tea\nWarm the pot.\nSteep 3 min.\n', '# Tea\nWarm the pot.\nSteep 4 min.\nServe.\n')).toEqual([
      ' # Tea',
      ' Warm the pot.',
      '-Steep 3 min.',
      '+Steep 4 min.',
      '+Serve.',
    ]);
  });

  it('finds the common lines around an insertion in the middle', () => {
    expect(show('a\nb\nc', 'a\nx\nb\nc')).toEqual([' a', '+x', ' b', ' c']);
    expect(show('a\nx\nb\nc', 'a\nb\nc')).toEqual([' a', '-x', ' b', ' c']);
  });

  it('shows a new file as all additions and an emptied one as all removals', () => {
    expect(show('', 'one\ntwo\n')).toEqual(['+one', '+two']);
    expect(show('one\n', '')).toEqual(['-one']);
    expect(show('', '')).toEqual([]);
  });

  it('keeps blank lines and whitespace as they are', () => {
    expect(show('a\n\nb', 'a\n\n b')).toEqual([' a', ' ', '-b', '+ b']);
  });
});
