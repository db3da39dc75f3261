import { beforeEach, describe, expect, it, vi } from 'vitest';
import { TOKEN_KEY, adoptToken } from '../src/lib/token';

function place(hash: string) {
  const loc = { hash, pathname: '/ui/', search: '' };
  const hist = { state: null, replaceState: vi.fn() };
  return { loc, hist };
}

describe('adoptToken', () => {
  beforeEach(() => sessionStorage.clear());

  it('reads the token from the fragment, stores it and strips it from the address bar', () => {
    const { loc, hist } = place('#token=abc123');
    expect(adoptToken(loc, hist, sessionStorage)).toBe('abc123');
    expect(sessionStorage.getItem(TOKEN_KEY)).toBe('abc123');
    expect(hist.replaceState).toHaveBeenCalledWith(null, '', '/ui/');
  });

  it('keeps the rest of the fragment', () => {
    const { loc, hist } = place('#token=t&view=memory');
    expect(adoptToken(loc, hist, sessionStorage)).toBe('t');
    expect(hist.replaceState).toHaveBeenCalledWith(null, '', '/ui/#view=memory');
  });

  it('falls back to the stored token and leaves the address bar alone', () => {
    sessionStorage.setItem(TOKEN_KEY, 'kept');
    const { loc, hist } = place('#/memory');
    expect(adoptToken(loc, hist, sessionStorage)).toBe('kept');
    expect(hist.replaceState).not.toHaveBeenCalled();
  });

  it('strips an empty token without storing it', () => {
    const { loc, hist } = place('#token=');
    expect(adoptToken(loc, hist, sessionStorage)).toBeNull();
    expect(hist.replaceState).toHaveBeenCalledWith(null, '', '/ui/');
    expect(sessionStorage.getItem(TOKEN_KEY)).toBeNull();
  });

  it('uses the real window by default', () => {
    window.history.replaceState(null, '', '/ui/#token=from-window');
    expect(adoptToken()).toBe('from-window');
    expect(window.location.hash).toBe('');
    expect(window.location.href).not.toContain('from-window');
  });
});
