// A panel that reloads on events may have several requests in flight; only the newest one's
// answer (or error) is shown, whatever order they come back in.

import { messageOf } from './api';

/** Returns a loader: each call runs `fetch` and hands its value to `shown`, or its error's
 *  message to `failed`, unless a newer call has started since. */
export function newestOnly<T>(
  fetch: () => Promise<T>,
  shown: (value: T) => void,
  failed: (message: string) => void,
): () => Promise<void> {
  let asked = 0;
  return async () => {
    const mine = ++asked;
    try {
      const value = await fetch();
      if (mine === asked) shown(value);
    } catch (e) {
      if (mine === asked) failed(messageOf(e));
    }
  };
}
