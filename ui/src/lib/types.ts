// The admin API's answers, as far as the UI reads them.

export interface Upstream {
  name: string;
  protocol: string;
  base_url: string;
  model: string | null;
  key_source: string;
}

export interface Status {
  version: string;
  mode: string;
  listen: string;
  uptime_secs: number;
  upstreams: Upstream[];
  requests: number;
  errors: number;
  last_error: string | null;
  sessions_open: number;
  turns_recorded: number;
  skills: { count: number; disabled: number; broken_files: number } | null;
  memory: { active: number; pinned: number; superseded: number; archived: number; scopes: number } | null;
  /** Absent from engines older than the health section. */
  health?: Health;
  learning_calls?: LearningCalls;
  /** Retrieval by meaning; absent when everything is found by words, or from older engines. */
  embeddings?: { source: string; model: string; ready: boolean; line: string } | null;
  /** The models learning calls; without one, what still learns. */
  learning_model?: { evolution: string | null; extraction: string | null; line: string } | null;
  /** A newer version to install, or one installed already; absent from older engines. */
  update?: UpdateStatus | null;
}

/** `/api/updates` (and status's `update`). */
export interface UpdateStatus {
  check: string;
  current: string;
  source: string | null;
  from: string | null;
  available: string | null;
  apply: string | null;
  error: string | null;
  checked_at_ms: number | null;
  restart_to: string | null;
  line: string | null;
}

export interface RecorderHealth {
  dropped_queue_full: number;
  last_dropped_at_ms: number | null;
  failed_writes: number;
  last_write_error: string | null;
  last_write_error_at_ms: number | null;
  database_problem: string | null;
}

export interface JobHealth {
  job: string;
  failures: number;
  failing_in_a_row: number;
  last_error: string | null;
  last_error_at_ms: number | null;
  backing_off_until_ms: number | null;
  given_up: number;
  last_given_up: string | null;
  last_success_at_ms: number | null;
}

export interface Health {
  database: string | null;
  recorder: RecorderHealth;
  learning: JobHealth[];
}

export interface CallCounts {
  calls: number;
  failed: number;
  input_tokens: number;
  output_tokens: number;
}

export interface LearningCalls {
  since_start: CallCounts;
  day: string;
  today: CallCounts;
  by_purpose: Record<string, CallCounts>;
}

export interface Scheduler {
  state: 'waiting' | 'open' | 'running' | 'paused' | string;
  gate_background_learning: boolean;
  running: boolean;
  pause_problem: string | null;
  /** `idle`: where keyboard idle is read (empty from an older engine). */
  text: { state: string; next_window: string; idle?: string };
}

export const KINDS = [
  'episodic',
  'semantic',
  'preference',
  'project_state',
  'working_summary',
  'procedural_observation',
] as const;
export const STATUSES = ['active', 'superseded', 'archived'] as const;
export const SOURCES = ['extracted', 'rules', 'manual', 'import', 'api'] as const;
export const SORTS = ['updated', 'created', 'accessed', 'importance'] as const;

export interface MemoryUnit {
  id: string;
  scope: string;
  kind: string;
  content: string;
  summary: string;
  fact_key: string | null;
  importance: number;
  confidence: number;
  pinned: boolean;
  status: string;
  source: string;
  tags: string[];
  created_ms: number;
  updated_ms: number;
  version: number;
}

/** `/api/memory/profile`: the standing rules of a scope and how the profile shows them. */
export interface MemoryProfile {
  scope: string;
  profile_tokens: number;
  on: boolean;
  whole: boolean;
  units: MemoryUnit[];
}

export interface MemoryPage {
  units: MemoryUnit[];
  next_cursor: string | null;
  total: number;
}

export interface MemoryFilters {
  scope: string;
  kind: string;
  status: string;
  pinned: string;
  tag: string;
  source: string;
  contains: string;
  sort: string;
}

export const NO_FILTERS: MemoryFilters = {
  scope: '',
  kind: '',
  status: '',
  pinned: '',
  tag: '',
  source: '',
  contains: '',
  sort: 'updated',
};

export interface MemoryHit {
  unit: MemoryUnit;
  score: number;
  matched_terms: string[];
  reason: string;
}

export interface MemoryShown {
  unit: MemoryUnit;
  history: unknown[];
  events: { action?: string; actor?: string; at_ms?: number }[];
}

export interface Skill {
  name: string;
  description: string;
  category: string | null;
  tags: string[];
  always: boolean;
  disabled: boolean;
  /** Where it came from (`evolved` reads as "learned"; see `sourceWord`). */
  source?: SkillSource;
  provenance?: SkillProvenance | null;
  body?: string;
  file?: string;
}

export type SkillSource = 'builtin' | 'user' | 'evolved' | 'imported' | 'team';

export interface SkillProvenance {
  sessions?: string[];
  created_at?: string;
  model?: string;
  improves?: string;
  generation?: number;
  /** Where an imported or team skill came from (a path, an archive, a remote). */
  origin?: string;
}

export interface SkillHit {
  name: string;
  score: number;
  matched_terms: string[];
  injected: boolean;
  cosine?: number;
}

export interface SkillSearch {
  query: string;
  semantic: boolean;
  ranked: SkillHit[];
  injected: string[];
}

export function when(ms: number | null | undefined): string {
  if (!ms) return '—';
  return new Date(ms).toLocaleString();
}

/** One completed (or failed) training step of `/api/learning`. */
export interface LearningStep {
  step: number;
  at_ms: number;
  samples: number;
  dropped: number;
  /** null when the engine could not compute a finite mean. */
  mean_reward: number | null;
  loss: number | null;
  duration_ms: number;
  sampler_path: string | null;
  checkpoint_path: string | null;
  error: string | null;
}

/** `GET /api/learning`: weight learning's state, counts and steps (oldest first). */
export interface Learning {
  mode: 'skills_only' | 'rl' | 'madmax';
  active: boolean;
  backend: 'tinker' | 'mint' | 'weaver' | null;
  model: string;
  state: 'off' | 'connecting' | 'ready' | 'unavailable';
  serving: string | null;
  training: boolean;
  step: number;
  samples: { waiting: number; unjudged: number; held: number; consumed: number; dropped: number };
  judge_backlog: number;
  served: { sampled: number; fallback: number };
  last_error: string | null;
  last_checkpoint: string | null;
  steps: LearningStep[];
}

/** One model's turns in a `/api/stats` window. */
export interface ModelCost {
  model: string;
  turns: number;
  /** Turns whose provider reported token counts. */
  turns_with_usage: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cache_reported_input_tokens: number;
  cache_reported_injected_tokens: number;
  cache_reported_block_tokens: number;
  injected_tokens: number;
  block_tokens: number;
  /** null when the model has no price. */
  price_source: 'config' | 'built_in' | null;
  cost_usd: number | null;
  injected_cost_usd: number | null;
}

/** One learning purpose (`evolution`, `extraction`, `embeddings`) over the window's UTC days. */
export interface PurposeCost {
  purpose: string;
  /** The model the purpose calls now; its price is applied to the whole window. */
  model: string | null;
  calls: number;
  failed: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
}

export interface LearningCost {
  /** The first UTC day counted, `YYYY-MM-DD`. */
  since_day: string;
  calls: number;
  failed: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
  /** Purposes with calls whose model has no price. */
  unpriced: string[];
  by_purpose: PurposeCost[];
}

/** `GET /api/stats?hours=N`: what the window's turns and learning cost. A cost is null
 *  where no model had a price; a share is null where no provider reported its cache. */
export interface CostReport {
  hours: number;
  turns: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cache_read_share: number | null;
  /** An estimate: the share had MetaClaw added nothing to the prompts. */
  cache_read_share_without_metaclaw: number | null;
  injected_tokens: number;
  /** At the uncached input price: an upper bound. */
  injected_cost_usd: number | null;
  turns_cost_usd: number | null;
  unpriced_models: string[];
  models: ModelCost[];
  learning: LearningCost;
  /** Day by day (UTC, oldest first), when asked for with `days`. */
  daily: DayCost[];
}

/** One UTC day of `/api/stats?days=N`: the report's figures for that day alone. */
export interface DayCost {
  /** `YYYY-MM-DD`. */
  day: string;
  turns: number;
  cache_read_share: number | null;
  cache_read_share_without_metaclaw: number | null;
  injected_tokens: number;
  injected_cost_usd: number | null;
  turns_cost_usd: number | null;
  learning_calls: number;
  learning_tokens: number;
  learning_cost_usd: number | null;
}
