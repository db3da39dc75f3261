// `/api/memory/export` and `/api/memory/import`: JSONL, one unit per line.

export interface ImportReport {
  imported: number;
  skipped_existing: number;
  /** [1-based line number, reason] for each line that could not be imported. */
  errors: [number, string][];
}

export const EXPORT_FILE = 'metaclaw-memory.jsonl';

export function importSummary(r: ImportReport): string {
  const bad = r.errors.length;
  return `Imported ${r.imported}; ${r.skipped_existing} already stored; ${bad} ${bad === 1 ? 'line' : 'lines'} not imported.`;
}

/** A picked file's text; FileReader rather than `Blob.text()`, which older engines lack. */
export function readText(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result ?? ''));
    reader.onerror = () => reject(reader.error ?? new Error('the file could not be read'));
    reader.readAsText(file);
  });
}
