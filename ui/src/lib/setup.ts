// The setup flow's shapes (`/api/setup`, `/api/providers`, `/api/agents`) and the apply
// sequence: apply → restart (when asked) → connect agents → verify.

import { messageOf, type Api } from './api';
import { restartAndWait, type WaitOptions } from './restart';

export interface Mode {
  name: string;
  label: string;
  description: string;
}

export interface SetupState {
  configured: boolean;
  answers: {
    provider: string;
    api_base: string;
    api: string;
    model: string;
    mode: string;
    agents: string[];
    /** Config `wechat.enabled` (absent from an engine without the WeChat channel). */
    wechat?: boolean;
  };
  key: { stored: boolean; source: string | null };
  modes: Mode[];
  windows: { sleep_start: string; sleep_end: string; calendar: { enabled: boolean; connected: boolean } };
}

export interface Preset {
  name: string;
  label: string;
  api_base: string;
  api: string;
  default_model: string;
  key_required: boolean;
}

export interface Providers {
  presets: Preset[];
  configured: { provider: string; preset: string | null; api: string; api_base: string; model_id: string; key_stored: boolean | null };
}

export interface ProbeReport {
  ok: boolean;
  latency_ms: number;
  checked?: string;
  model_listed?: boolean | null;
  models?: string[];
  models_total?: number;
  error?: { kind: string; message: string; status: number | null } | null;
}

export interface ProviderForm {
  provider: string;
  api_base: string;
  api: string;
  model: string;
  api_key: string;
}

/** A connection test's outcome in plain words. */
export function describeProbe(r: ProbeReport, model: string): { ok: boolean; text: string } {
  if (!r.ok) return { ok: false, text: `Connection failed: ${r.error?.message ?? 'no reason given'}` };
  let text = `Connected in ${r.latency_ms} ms.`;
  if (r.models?.length) {
    const more = (r.models_total ?? r.models.length) - r.models.length;
    text += ` Models: ${r.models.join(', ')}${more > 0 ? ` and ${more} more` : ''}.`;
  }
  if (r.model_listed === false) text += ` Note: ${model} is not in the provider's model list.`;
  return { ok: true, text };
}

export interface AgentStatus {
  agent: string;
  /** How it reaches MetaClaw now (or by default): through the proxy, or MetaClaw inside it. */
  mode?: 'proxy' | 'plugin';
  installed: boolean;
  config: string | null;
  config_exists: boolean;
  connected: boolean;
  problem: string | null;
  notes: string[];
}

export interface AgentList {
  agents: AgentStatus[];
  /** Agents that can run MetaClaw inside them (`?plugin=true`). */
  with_plugin?: string[];
  /** Of those, the ones that connect only that way. */
  plugin_only?: string[];
  reconnecting?: boolean;
}

export interface Change {
  key: string;
  old: unknown;
  new: unknown;
}

export interface AgentPreview {
  agent: string;
  file: string | null;
  creates: boolean;
  already_connected: boolean;
  changes: Change[];
  restart_command: string[] | null;
  notes: string[];
}

export interface AgentConnected {
  agent: string;
  changed: boolean;
  warnings: string[];
  notes: string[];
}

export interface ApplyBody {
  provider: string;
  api_base: string;
  api: string;
  model: string;
  api_key?: string;
  mode: string;
  agents: string[];
  /** Of `agents`, those MetaClaw runs inside (their plugin): connected with `?plugin=true`,
   *  and not sent to apply, which records the proxy agent the next start connects. */
  plugins?: string[];
  sleep_start?: string;
  sleep_end?: string;
  /** Written as `wechat.enabled`; left out, the config keeps its value. */
  wechat?: boolean;
}

export interface Applied {
  written: string[];
  key: 'stored' | 'kept' | 'none';
  restart_required: boolean;
}

export type Verify = { ok: true; model: string; reply: string; latency_ms: number } | { ok: false; error: string };

export type Phase = 'applying' | 'restarting' | 'connecting' | 'verifying' | 'done';

export interface AgentOutcome {
  agent: string;
  ok: boolean;
  text: string;
}

export interface SetupResult {
  applied: Applied;
  agents: AgentOutcome[];
  verify: Verify;
}

/** The body for apply: an empty key means "keep the stored one", so it is left out. */
export function applyBody(b: ApplyBody): ApplyBody {
  const body: ApplyBody = { ...b, agents: b.agents.filter((a) => !(b.plugins ?? []).includes(a)) };
  delete body.plugins;
  if (!body.api_key) delete body.api_key;
  if (!body.sleep_start) delete body.sleep_start;
  if (!body.sleep_end) delete body.sleep_end;
  if (body.wechat === undefined) delete body.wechat;
  return body;
}

/** Runs the whole apply sequence, telling `onPhase` where it is. A refused apply or a
 *  restart that does not come back throws; a failed agent connect is reported, not thrown. */
export async function runSetup(
  api: Api,
  body: ApplyBody,
  onPhase: (p: Phase) => void = () => {},
  wait: WaitOptions = {},
): Promise<SetupResult> {
  onPhase('applying');
  // A refusal (an ApiError naming its `field`) ends the sequence here: nothing was written.
  const applied = await api.post<Applied>('/api/setup/apply', applyBody(body));
  if (applied.restart_required) {
    onPhase('restarting');
    await restartAndWait(api, wait);
  }
  onPhase('connecting');
  const agents: AgentOutcome[] = [];
  for (const name of body.agents) {
    const plugin = (body.plugins ?? []).includes(name);
    try {
      const c = await api.post<AgentConnected>(`/api/agents/${encodeURIComponent(name)}/connect${plugin ? '?plugin=true' : ''}`);
      const extra = [...(c.warnings ?? [])].join(' ');
      const how = plugin ? ' (plugin)' : '';
      agents.push({ agent: name, ok: true, text: (c.changed ? 'connected' : 'already connected') + how + (extra ? ` — ${extra}` : '') });
    } catch (e) {
      agents.push({ agent: name, ok: false, text: messageOf(e) });
    }
  }
  onPhase('verifying');
  let verify: Verify;
  try {
    verify = await api.post<Verify>('/api/setup/verify');
  } catch (e) {
    verify = { ok: false, error: messageOf(e) };
  }
  onPhase('done');
  return { applied, agents, verify };
}

const FIELDS = ['provider', 'api_base', 'api', 'model', 'api_key', 'mode', 'agents', 'sleep_start', 'sleep_end', 'wechat'];

/** The setup form field an API error names (`llm.model_id` → `model`), or null. */
export function formField(field: string | null): string | null {
  if (!field) return null;
  let f = field.replace(/^(llm|scheduler)\./, '').replace(/\[.*$/, '');
  if (f === 'model_id') f = 'model';
  if (f === 'wechat.enabled') f = 'wechat';
  return FIELDS.includes(f) ? f : null;
}
