// The skills exchange: where each skill came from, `/api/skills/import` (a `.zip` or a
// folder's files), `/api/skills/quarantine` (what the safety gate held back) and
// `/api/skills/sync` (the team library).

import type { SkillSource } from './types';

/** A skill's source as people read it. */
export function sourceWord(source: SkillSource | undefined): string {
  switch (source) {
    case 'builtin':
      return 'built-in';
    case 'evolved':
      return 'learned';
    case undefined:
      return '';
    default:
      return source;
  }
}

/** One thing the safety gate found. */
export interface Finding {
  /** The rule's stable id, e.g. `download-and-execute`. */
  rule: string;
  reason: string;
  /** `name`, `description`, `tags` or `body`. */
  field: string;
  /** 1-based, in the body. */
  line: number | null;
  excerpt: string;
}

/** Where a finding is: "body line 3", or the field. */
export function findingWhere(f: Finding): string {
  return f.line != null ? `body line ${f.line}` : f.field;
}

export type ImportOutcome = 'imported' | 'updated' | 'skipped' | 'quarantined' | 'invalid';

export interface ImportItem {
  name: string;
  outcome: ImportOutcome;
  /** Only for `quarantined`. */
  reasons?: Finding[];
  /** Only for `invalid`: `file:line: message`. */
  error?: string;
  warnings?: string[];
}

export interface ImportReport {
  items: ImportItem[];
}

const OUTCOMES: ImportOutcome[] = ['imported', 'updated', 'skipped', 'quarantined', 'invalid'];

/** "2 imported, 1 quarantined" (outcomes in a fixed order, only those that occur). */
export function importSummary(items: ImportItem[]): string {
  if (!items.length) return 'No skill in the upload.';
  return OUTCOMES.map((o) => [o, items.filter((i) => i.outcome === o).length] as const)
    .filter(([, n]) => n > 0)
    .map(([o, n]) => `${n} ${o}`)
    .join(', ');
}

export interface Quarantined {
  name: string;
  description: string;
  reasons: Finding[];
  /** e.g. `import: /path`, `team: URL`, `learned`. */
  origin: string;
  at_ms: number;
}

export interface SyncState {
  enabled: boolean;
  remote: string | null;
  last_sync_ms: number | null;
  last_error: string | null;
  /** Changed here, not yet accepted by the team. */
  pending: string[];
  /** Deleted here, to be removed from the team. */
  deleted: string[];
}

export interface SyncReport {
  sent: string[];
  received: string[];
  quarantined: [string, Finding[]][];
  conflicts: string[];
  deleted: string[];
  /** Why the team could not be reached or refused; the changes wait for the next sync. */
  waiting: string | null;
}

/** "Sent 1, received 2, quarantined 0, conflicts 0, deleted 0." */
export function syncSummary(r: SyncReport): string {
  return (
    `Sent ${r.sent.length}, received ${r.received.length}, quarantined ${r.quarantined.length}, ` +
    `conflicts ${r.conflicts.length}, deleted ${r.deleted.length}.`
  );
}

/** One file of a folder upload. */
export interface UploadedFile {
  path: string;
  content_base64: string;
}

/** Files a folder upload leaves out: anything under a dot-folder (`.git/`) or dot-file. */
export function skipped(path: string): boolean {
  return path.split('/').some((part) => part.startsWith('.'));
}

/** A picked file's bytes; FileReader rather than `Blob.arrayBuffer()`, which older engines lack. */
export function readBytes(file: Blob): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(new Uint8Array(reader.result as ArrayBuffer));
    reader.onerror = () => reject(reader.error ?? new Error('the file could not be read'));
    reader.readAsArrayBuffer(file);
  });
}

export function base64(bytes: Uint8Array): string {
  let binary = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) {
    binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  }
  return btoa(binary);
}

/** A folder input's files as the import's JSON body, each under its `webkitRelativePath`. */
export async function folderFiles(files: ArrayLike<File>): Promise<UploadedFile[]> {
  const out: UploadedFile[] = [];
  for (const f of Array.from(files)) {
    const path = f.webkitRelativePath || f.name;
    if (skipped(path)) continue;
    out.push({ path, content_base64: base64(await readBytes(f)) });
  }
  return out;
}
