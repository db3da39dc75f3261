// Hash routes: `#/settings` inside the app, and `#screen=settings` as handed over by the
// desktop shell (`/ui/#token=…&screen=settings`, left after the token is stripped).

export const SCREENS = [
  { id: 'dashboard', label: 'Dashboard' },
  { id: 'setup', label: 'Setup' },
  { id: 'memory', label: 'Memory' },
  { id: 'skills', label: 'Skills' },
  { id: 'settings', label: 'Settings' },
  { id: 'logs', label: 'Logs' },
] as const;

export type ScreenId = (typeof SCREENS)[number]['id'];

function known(id: string | null | undefined): ScreenId | null {
  return SCREENS.find((s) => s.id === id)?.id ?? null;
}

/** The screen a fragment names, or null when it names none. */
export function screenOf(hash: string): ScreenId | null {
  const h = hash.replace(/^#/, '');
  if (h.startsWith('/')) return known(h.slice(1).split(/[?&#]/)[0]);
  return known(new URLSearchParams(h).get('screen'));
}

/** The in-app address of a screen. */
export function hrefOf(id: ScreenId): string {
  return `#/${id}`;
}
