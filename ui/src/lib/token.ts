// The admin token: handed over once in the URL fragment (`/ui/#token=…`, never sent to any
// server), then kept in sessionStorage for this tab and stripped from the address bar.

export const TOKEN_KEY = 'metaclaw.adminToken';

/** Reads `token=` from the fragment, stores it and removes it from the address bar.
 *  Returns the token in force afterwards (from the fragment, else the stored one). */
export function adoptToken(
  loc: Pick<Location, 'hash' | 'pathname' | 'search'> = window.location,
  hist: Pick<History, 'replaceState' | 'state'> = window.history,
  storage: Storage = window.sessionStorage,
): string | null {
  const hash = loc.hash.startsWith('#') ? loc.hash.slice(1) : loc.hash;
  const params = new URLSearchParams(hash);
  const fromUrl = params.get('token');
  if (fromUrl !== null) {
    params.delete('token');
    const rest = params.toString();
    hist.replaceState(hist.state, '', loc.pathname + loc.search + (rest ? `#${rest}` : ''));
    const token = fromUrl.trim();
    if (token) {
      storage.setItem(TOKEN_KEY, token);
      return token;
    }
  }
  return storage.getItem(TOKEN_KEY);
}

export function storedToken(storage: Storage = window.sessionStorage): string | null {
  return storage.getItem(TOKEN_KEY);
}

export function saveToken(token: string, storage: Storage = window.sessionStorage): void {
  storage.setItem(TOKEN_KEY, token.trim());
}

export function forgetToken(storage: Storage = window.sessionStorage): void {
  storage.removeItem(TOKEN_KEY);
}
