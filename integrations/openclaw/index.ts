// MetaClaw as OpenClaw's context engine (`plugins.slots.contextEngine: "metaclaw"`), written by
// `metaclaw agent connect openclaw --plugin`. It changes nothing of how OpenClaw assembles and
// compacts a conversation (the messages pass through; compaction is OpenClaw's own) and keeps
// the memory plugin's prompt section (`memory-core`): it only adds MetaClaw's block for the
// user's message to the system prompt, and tells MetaClaw each accepted turn and each session
// that ends, so MetaClaw learns as it does for proxied agents.

import { buildMemorySystemPromptAddition, delegateCompactionToRuntime } from "openclaw/plugin-sdk/core";

import { MetaClaw } from "./client.ts";
import { turnOf } from "./turn.ts";

const ID = "metaclaw";
const AGENT = "openclaw";
const DEFAULT_TIMEOUT_MS = 1500;
/** Turns OpenClaw may present again after a retry; older keys are forgotten. */
const REMEMBERED_TURNS = 512;
/** Ends that close a conversation; a gateway going down does not. */
const ENDINGS = new Set(["new", "reset", "idle", "daily", "deleted"]);

type Config = { home?: string; timeoutMs?: number };

/** A rough token count (4 characters a token), for OpenClaw's compaction threshold. */
function estimate(messages: unknown[]): number {
  return Math.ceil(JSON.stringify(messages ?? []).length / 4);
}

export default function register(api: any): void {
  const config: Config = api.pluginConfig ?? {};
  const log = api.logger ?? console;
  if (!config.home) {
    log.warn("[metaclaw] no `home` in plugins.entries.metaclaw.config: reconnect with `metaclaw agent connect openclaw --plugin`");
    return;
  }
  const metaclaw = new MetaClaw(config.home, config.timeoutMs ?? DEFAULT_TIMEOUT_MS, log);
  const committed: string[] = [];

  api.registerContextEngine(ID, () => ({
    info: {
      id: ID,
      name: "MetaClaw",
      ownsCompaction: false,
      acceptedHostParams: ["sessionKey", "prompt"],
      transcriptSemantics: {
        currentTurnFence: "before-current-turn-entry-v1",
        turnAdvancementIdempotency: "atomic-idempotent-v1",
      },
    },

    // The session manager keeps the transcript; nothing to store here.
    async ingest() {
      return { ingested: false };
    },

    async assemble(params: any) {
      const memory = buildMemorySystemPromptAddition({
        availableTools: params.availableTools ?? new Set(),
        citationsMode: params.citationsMode,
        agentSessionKey: params.sessionKey,
      });
      let block = "";
      if (typeof params.prompt === "string" && params.prompt.trim()) {
        const answer = await metaclaw.call("context", {
          session_id: params.sessionId,
          agent: AGENT,
          prompt: params.prompt,
        });
        block = typeof answer?.block === "string" ? answer.block : "";
      }
      const addition = [block, memory].filter((s) => typeof s === "string" && s.trim()).join("\n\n");
      return {
        messages: params.messages,
        estimatedTokens: estimate(params.messages),
        ...(addition ? { systemPromptAddition: addition } : {}),
      };
    },

    async compact(params: any) {
      return await delegateCompactionToRuntime(params);
    },

    // Called once per accepted turn (again only after a retry, with the same key). Never
    // fails: a turn MetaClaw could not take is one it does not learn from, and OpenClaw must
    // not hold its next turn for it.
    async commitTurn(params: any) {
      if (committed.includes(params.advancementKey)) return { status: "duplicate" };
      committed.push(params.advancementKey);
      if (committed.length > REMEMBERED_TURNS) committed.shift();
      const turn = params.isHeartbeat ? undefined : turnOf(params.messages);
      if (turn) {
        await metaclaw.call("turn", {
          session_id: params.sessionId,
          agent: AGENT,
          user: turn.user,
          assistant: turn.assistant,
          tools: turn.tools,
          ...(turn.model ? { model: turn.model } : {}),
        });
      }
      return { status: "committed" };
    },
  }));

  api.on("session_end", async (event: any) => {
    if (event?.sessionId && ENDINGS.has(event.reason)) {
      await metaclaw.call("session_end", { session_id: event.sessionId });
    }
  });
}
