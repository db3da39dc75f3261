// The dashboard tells of a new version once: the version told is remembered in this browser.

import type { UpdateStatus } from './types';

export const TOLD_KEY = 'metaclaw.update.told';

/** The version worth telling about (installed already, else available), unless told before. */
export function versionToTell(u: UpdateStatus | null | undefined, told: string | null): string | null {
  const v = u?.restart_to ?? u?.available ?? null;
  return v && v !== told ? v : null;
}
