// The running MetaClaw, found through its run files (`<home>/run/port`, `<home>/run/admin_token`,
// rewritten at every start), asked over loopback. Nothing secret is kept in OpenClaw's config.
// Every call is bounded and never throws: MetaClaw stopped or slow means OpenClaw goes on
// without it, said once in OpenClaw's log.

import { readFileSync } from "node:fs";
import { join } from "node:path";

export type Log = { warn: (message: string) => void; info?: (message: string) => void };

export class MetaClaw {
  private warned = false;

  constructor(
    private readonly home: string,
    private readonly timeoutMs: number,
    private readonly log: Log,
  ) {}

  /** The answer of `POST /api/plugin/<route>`, or `undefined` when MetaClaw could not give one. */
  async call(route: "context" | "turn" | "session_end", body: object): Promise<any | undefined> {
    let base: string;
    let token: string;
    try {
      const port = readFileSync(join(this.home, "run", "port"), "utf8").trim();
      token = readFileSync(join(this.home, "run", "admin_token"), "utf8").trim();
      base = `http://127.0.0.1:${Number.parseInt(port, 10)}`;
    } catch {
      this.unavailable(`MetaClaw is not running (no run files in ${this.home})`);
      return undefined;
    }
    try {
      const res = await fetch(`${base}/api/plugin/${route}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (!res.ok) {
        const text = (await res.text()).slice(0, 300);
        this.unavailable(`MetaClaw answered ${res.status} to ${route}: ${text}`);
        return undefined;
      }
      if (this.warned) {
        this.warned = false;
        this.log.info?.("[metaclaw] MetaClaw answers again");
      }
      return await res.json();
    } catch (e) {
      const why = e instanceof Error && e.name === "TimeoutError" ? `no answer within ${this.timeoutMs} ms` : String(e);
      this.unavailable(`MetaClaw did not answer (${why})`);
      return undefined;
    }
  }

  private unavailable(why: string): void {
    if (this.warned) return;
    this.warned = true;
    this.log.warn(`[metaclaw] ${why}: OpenClaw goes on without MetaClaw's context until it answers again`);
  }
}
