import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import UpdateNotice from '../src/components/UpdateNotice.svelte';
import { TOLD_KEY, versionToTell } from '../src/lib/update';
import type { UpdateStatus } from '../src/lib/types';
import { fakeApi, until } from './helpers';

const APPLY = "your system's updater, or: sudo apt update && sudo apt upgrade metaclaw";

function update(over: Partial<UpdateStatus>): UpdateStatus {
  return {
    check: 'daily',
    current: '0.1.0',
    source: 'apt',
    from: 'https://apt.example.org (stable)',
    available: null,
    apply: null,
    error: null,
    checked_at_ms: 1,
    restart_to: null,
    line: null,
    ...over,
  };
}

/** A Storage in memory (the browser's own is shared between tests). */
function memoryStore(): Storage {
  const m = new Map<string, string>();
  return {
    get length() {
      return m.size;
    },
    clear: () => m.clear(),
    getItem: (k) => m.get(k) ?? null,
    key: (i) => [...m.keys()][i] ?? null,
    removeItem: (k) => void m.delete(k),
    setItem: (k, v) => void m.set(k, v),
  };
}

describe('UpdateNotice', () => {
  it('tells of a new version once, with how to install it', async () => {
    const store = memoryStore();
    const api = fakeApi({ 'GET /api/updates': update({ available: '0.2.0', apply: APPLY }) });
    const first = render(UpdateNotice, { api, store });
    const notice = await screen.findByTestId('update-notice');
    expect(notice.textContent).toContain('MetaClaw 0.2.0 is available (you run 0.1.0)');
    expect(notice.textContent).toContain('sudo apt upgrade metaclaw');
    expect(store.getItem(TOLD_KEY)).toBe('0.2.0');
    await fireEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByTestId('update-notice')).toBeNull();
    first.unmount();

    // The next visit: told already, so nothing is shown.
    render(UpdateNotice, { api, store });
    await until(() => expect(api.calls.length).toBe(2));
    await settled();
    expect(screen.queryByTestId('update-notice')).toBeNull();
  });

  it('tells once more when the new version is installed, and of nothing from an older engine', async () => {
    const store = memoryStore();
    store.setItem(TOLD_KEY, '0.2.0');
    const api = fakeApi({ 'GET /api/updates': update({ available: '0.2.0', restart_to: '0.2.1' }) });
    render(UpdateNotice, { api, store });
    const notice = await screen.findByTestId('update-notice');
    expect(notice.textContent).toContain('MetaClaw 0.2.1 is installed');
    expect(notice.textContent).toContain('Restart MetaClaw');

    expect(versionToTell(update({}), null)).toBeNull();
    expect(versionToTell(null, null)).toBeNull();
    const older = fakeApi({});
    const empty = memoryStore();
    render(UpdateNotice, { api: older, store: empty });
    await until(() => expect(older.calls.length).toBe(1));
    await settled();
    expect(empty.getItem(TOLD_KEY)).toBeNull();
  });
});

/** The fake API answers without timers: one turn of the event loop applies its answer. */
function settled() {
  return new Promise((r) => setTimeout(r, 0));
}
