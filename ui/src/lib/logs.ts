// `/api/logs`: the levels offered and the client-side text filter.

export interface LogLine {
  time: string;
  level: string;
  target: string;
  message: string;
  text: string;
}

export interface Logs {
  file: string | null;
  lines: LogLine[];
}

export const LEVELS = [
  { value: 'error', label: 'Errors' },
  { value: 'warn', label: 'Warnings and worse' },
  { value: 'info', label: 'Info and worse' },
  { value: 'debug', label: 'Debug' },
] as const;

/** Lines whose raw text contains every word of `filter` (case-insensitive). */
export function filterLines(lines: LogLine[], filter: string): LogLine[] {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return lines;
  return lines.filter((l) => {
    const text = (l.text || `${l.time} ${l.level} ${l.target} ${l.message}`).toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

/** The CSS class for a level (`ERROR` → `error`), unknown levels plain. */
export function levelClass(level: string): string {
  const l = level.toLowerCase();
  return ['error', 'warn', 'info', 'debug', 'trace'].includes(l) ? l : 'plain';
}
