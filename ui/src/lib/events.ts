// `/api/events`: the engine's live events, followed with reconnects.

import type { Api } from './api';
import type { SseEvent } from './sse';

/** The events after which the dashboard's numbers are stale. */
export const REFRESH_ON = ['turn', 'skills_learned', 'memory_changed', 'started', 'storage_changed', 'update_available', 'restart_offered'];

/** Follows the stream until `signal` aborts, reconnecting after `retryMs` when it breaks
 *  (the engine restarting, say). */
export async function followEvents(api: Api, onEvent: (e: SseEvent) => void, signal: AbortSignal, retryMs = 3000): Promise<void> {
  while (!signal.aborted) {
    try {
      await api.stream('/api/events', onEvent, signal);
    } catch {
      if (signal.aborted) return;
    }
    if (signal.aborted) return;
    await new Promise<void>((r) => {
      const t = setTimeout(r, retryMs);
      signal.addEventListener('abort', () => {
        clearTimeout(t);
        r();
      });
    });
  }
}

/** A sentence for the events worth telling the reader about, or undefined to leave the
 *  notice as it is ('' clears it). */
export function noticeOf(e: SseEvent): string | undefined {
  let data: Record<string, unknown> = {};
  try {
    data = JSON.parse(e.data) as Record<string, unknown>;
  } catch {
    // a frame without data: the kind alone is enough
  }
  switch (e.event) {
    case 'upstream_auth_failed':
      return `The provider (${String(data.upstream ?? 'upstream')}) refused MetaClaw's API key (HTTP ${String(data.status ?? '?')}). Run setup again to enter a new key.`;
    case 'restarting':
      return 'MetaClaw is restarting…';
    case 'started':
      return '';
    default:
      return undefined;
  }
}
