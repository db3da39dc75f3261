// `/api/settings`: the curated settings and what a save sends.

export type SettingValue = string | number | boolean | null;

export interface Setting {
  key: string;
  label: string;
  help: string;
  type: 'choice' | 'bool' | 'int' | 'text' | 'time' | string;
  choices?: (string | { value: string; label: string })[];
  value: SettingValue;
  restart: boolean;
}

export interface Settings {
  config_path: string;
  settings: Setting[];
  warnings: string[];
}

export interface SettingsSaved {
  written: string[];
  restart_required: boolean;
}

/** The form's value as the API expects it for the setting's type. */
export function coerce(s: Setting, v: SettingValue): SettingValue {
  if (s.type === 'int') {
    if (v === '' || v === null) return null;
    const n = Number(v);
    return Number.isFinite(n) ? n : (v as string);
  }
  if (s.type === 'bool') return Boolean(v);
  return v === null ? null : typeof v === 'string' ? v : String(v);
}

/** Only the keys whose value differs from what was loaded. */
export function changedKeys(settings: Setting[], values: Record<string, SettingValue>): Record<string, SettingValue> {
  const changes: Record<string, SettingValue> = {};
  for (const s of settings) {
    if (!(s.key in values)) continue;
    const v = coerce(s, values[s.key]);
    if (v !== s.value) changes[s.key] = v;
  }
  return changes;
}
