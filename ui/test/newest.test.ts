import { describe, expect, it } from 'vitest';
import { newestOnly } from '../src/lib/newest';

/** A promise settled by hand, so the test decides the order answers come back in. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('newestOnly', () => {
  it('shows the newest answer even when an older one arrives after it', async () => {
    const pending = [deferred<string>(), deferred<string>()];
    let call = 0;
    const shown: string[] = [];
    const failed: string[] = [];
    const load = newestOnly(() => pending[call++].promise, (v) => shown.push(v), (m) => failed.push(m));
    const first = load();
    const second = load();
    pending[1].resolve('new');
    await second;
    pending[0].resolve('old');
    await first;
    expect(shown).toEqual(['new']);
    expect(failed).toEqual([]);
  });

  it('reports an error only when it belongs to the newest call', async () => {
    const pending = [deferred<string>(), deferred<string>(), deferred<string>()];
    let call = 0;
    const shown: string[] = [];
    const failed: string[] = [];
    const load = newestOnly(() => pending[call++].promise, (v) => shown.push(v), (m) => failed.push(m));
    const first = load();
    const second = load();
    pending[0].reject(new Error('stale failure'));
    await first;
    pending[1].reject(new Error('engine down'));
    await second;
    expect(failed).toEqual(['engine down']);
    const third = load();
    pending[2].resolve('back');
    await third;
    expect(shown).toEqual(['back']);
  });
});
