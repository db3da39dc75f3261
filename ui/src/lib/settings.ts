// `/api/settings`: the curated settings and what a save sends.

/** A model's prices, US dollars per million tokens; a cache price left out costs the input
 *  price. Text the user typed that is not a number is sent as is, for the engine to refuse
 *  with its reason. */
export interface Price {
  input?: number | string;
  output?: number | string;
  cache_read?: number | string;
  cache_write?: number | string;
}

export type PriceTable = Record<string, Price>;

export type SettingValue = string | number | boolean | null | PriceTable;

/** One row of the price editor, as typed. */
export interface PriceRow {
  model: string;
  input: string;
  output: string;
  cache_read: string;
  cache_write: string;
}

const PRICE_FIELDS = ['input', 'output', 'cache_read', 'cache_write'] as const;

/** The table as rows, models in name order. */
export function priceRows(t: SettingValue): PriceRow[] {
  if (!t || typeof t !== 'object') return [];
  return Object.keys(t)
    .sort()
    .map((model) => {
      const p = t[model];
      const text = (v: number | string | undefined) => (v === undefined || v === null ? '' : String(v));
      return { model, input: text(p.input), output: text(p.output), cache_read: text(p.cache_read), cache_write: text(p.cache_write) };
    });
}

/** The rows as the engine's table: models in name order, rows without a model left out, an
 *  empty price left out (an empty cache price means "the input price"). */
export function priceTable(rows: PriceRow[]): PriceTable {
  const table: PriceTable = {};
  const sorted = rows.map((r) => ({ ...r, model: r.model.trim() })).filter((r) => r.model !== '');
  sorted.sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
  for (const r of sorted) {
    const price: Price = {};
    for (const f of PRICE_FIELDS) {
      const text = r[f].trim();
      if (text === '') continue;
      const n = Number(text);
      price[f] = Number.isFinite(n) ? n : text;
    }
    table[r.model] = price;
  }
  return table;
}

export interface Setting {
  key: string;
  label: string;
  help: string;
  type: 'choice' | 'bool' | 'int' | 'text' | 'time' | string;
  choices?: (string | { value: string; label: string })[];
  /** The largest value of a `share` setting. */
  max?: number;
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
  if (s.type === 'int' || s.type === 'share') {
    if (v === '' || v === null) return null;
    const n = Number(v);
    return Number.isFinite(n) ? n : (v as string);
  }
  if (s.type === 'bool') return Boolean(v);
  if (s.type === 'prices') return priceTable(priceRows(v));
  if (typeof v === 'object' && v !== null) return JSON.stringify(v);
  return v === null ? null : typeof v === 'string' ? v : String(v);
}

/** Only the keys whose value differs from what was loaded. */
export function changedKeys(settings: Setting[], values: Record<string, SettingValue>): Record<string, SettingValue> {
  const changes: Record<string, SettingValue> = {};
  for (const s of settings) {
    if (!(s.key in values)) continue;
    const v = coerce(s, values[s.key]);
    const same = typeof v === 'object' && v !== null ? JSON.stringify(v) === JSON.stringify(coerce(s, s.value)) : v === s.value;
    if (!same) changes[s.key] = v;
  }
  return changes;
}
