// `/api/skills/log`: evolver runs, newest first, and totals over the whole log.

export interface SkillEvent {
  id: number;
  at_ms: number;
  trigger: string;
  session_ids: string[];
  model: string | null;
  outcome: string;
  added: string[];
  improved: string[];
  rejected: { name: string; reason: string }[];
  error: string | null;
  generation: number;
}

export interface SkillEventCounts {
  events: number;
  failed: number;
  skills_added: number;
  skills_improved: number;
  last_at_ms: number | null;
}

export interface SkillLog {
  events: SkillEvent[];
  counts: SkillEventCounts;
}
