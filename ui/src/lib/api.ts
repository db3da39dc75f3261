// The admin API client: every request carries `Authorization: Bearer <token>`, and every
// failure becomes an ApiError whose message is a sentence to show as text.

import { storedToken } from './token';
import { parseSse, type SseEvent } from './sse';

export class ApiError extends Error {
  readonly status: number;
  /** The request field the error is about (`{"error":{"field"}}`), when it names one. */
  readonly field: string | null;
  constructor(status: number, message: string, field: string | null = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.field = field;
  }
}

export type Params = Record<string, string | number | boolean | null | undefined>;

export interface Api {
  get<T>(path: string, params?: Params): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  patch<T>(path: string, body: unknown): Promise<T>;
  /** Optional so hand-written fakes need not carry them; `createApi` clients always do. */
  put?<T>(path: string, body: unknown): Promise<T>;
  /** The body as text (for non-JSON answers such as JSONL exports). */
  getText?(path: string, params?: Params): Promise<string>;
  /** Sends `text` as the raw body and reads a JSON answer. */
  postText?<T>(path: string, text: string, contentType?: string): Promise<T>;
  /** Sends `bytes` (a picked file, say) as the raw body and reads a JSON answer. */
  postBytes?<T>(path: string, bytes: Blob, contentType: string): Promise<T>;
  /** A DELETE, reading a JSON answer. */
  del?<T>(path: string): Promise<T>;
  /** Follows a Server-Sent Events stream until `signal` aborts or the stream ends. */
  stream(path: string, onEvent: (e: SseEvent) => void, signal: AbortSignal): Promise<void>;
}

export interface ApiOptions {
  token?: () => string | null;
  fetch?: typeof fetch;
  base?: string;
}

export const NO_TOKEN =
  'No admin token. Open the UI as /ui/#token=<the contents of $METACLAW_HOME/run/admin_token>.';

/** `?a=1&b=x`, leaving out empty values. */
export function query(params: Params = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The sentence for a failed response: the API's `{"error":{"message"}}`, else the body. */
export async function errorOf(res: Response): Promise<ApiError> {
  let text = '';
  try {
    text = await res.text();
  } catch {
    // keep the status line
  }
  let message = '';
  let field: string | null = null;
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; field?: unknown } };
    if (typeof body?.error?.message === 'string') message = body.error.message;
    if (typeof body?.error?.field === 'string') field = body.error.field;
  } catch {
    message = text.trim().slice(0, 300);
  }
  if (res.status === 401) {
    message = `The admin token was refused (${message || 'unauthorized'}). ${NO_TOKEN}`;
  }
  return new ApiError(res.status, message || `HTTP ${res.status} ${res.statusText}`.trim(), field);
}

export function createApi(opts: ApiOptions = {}): Api {
  const token = opts.token ?? (() => storedToken());
  const base = opts.base ?? '';
  const doFetch = (input: string, init: RequestInit) => (opts.fetch ?? fetch)(input, init);

  // `rawType` set: `body` (a string or a Blob) is sent as-is with that content type.
  async function send(method: string, path: string, body?: unknown, signal?: AbortSignal, rawType?: string) {
    const t = token();
    if (!t) throw new ApiError(401, NO_TOKEN);
    const headers: Record<string, string> = { Authorization: `Bearer ${t}` };
    if (body !== undefined) headers['Content-Type'] = rawType ?? 'application/json';
    let res: Response;
    try {
      res = await doFetch(base + path, {
        method,
        headers,
        body: body === undefined ? undefined : rawType ? (body instanceof Blob ? body : String(body)) : JSON.stringify(body),
        signal,
      });
    } catch (e) {
      if (signal?.aborted) throw e;
      throw new ApiError(0, `Cannot reach MetaClaw: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!res.ok) throw await errorOf(res);
    return res;
  }

  async function json<T>(res: Response): Promise<T> {
    try {
      return (await res.json()) as T;
    } catch {
      throw new ApiError(res.status, 'MetaClaw answered with something that is not JSON.');
    }
  }

  return {
    async get<T>(path: string, params?: Params) {
      return json<T>(await send('GET', path + query(params)));
    },
    async post<T>(path: string, body?: unknown) {
      return json<T>(await send('POST', path, body ?? {}));
    },
    async patch<T>(path: string, body: unknown) {
      return json<T>(await send('PATCH', path, body));
    },
    async put<T>(path: string, body: unknown) {
      return json<T>(await send('PUT', path, body));
    },
    async getText(path: string, params?: Params) {
      return (await send('GET', path + query(params))).text();
    },
    async postText<T>(path: string, text: string, contentType = 'text/plain') {
      return json<T>(await send('POST', path, text, undefined, contentType));
    },
    async postBytes<T>(path: string, bytes: Blob, contentType: string) {
      return json<T>(await send('POST', path, bytes, undefined, contentType));
    },
    async del<T>(path: string) {
      return json<T>(await send('DELETE', path));
    },
    async stream(path, onEvent, signal) {
      const res = await send('GET', path, undefined, signal);
      if (!res.body) return;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += value;
        const { events, rest } = parseSse(buffer);
        buffer = rest;
        events.forEach(onEvent);
      }
    },
  };
}

/** The client the screens use by default. */
export const api: Api = createApi();

/** A caught value as a sentence. */
export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
