// `/api/skills/proposals` and `/api/skills/{name}/history`: learned skills waiting for
// approval (`skills.review: ask`) and a skill's earlier versions.

/** A learned skill waiting for approval, with its file and the library's current one. */
export interface Proposal {
  name: string;
  description: string;
  sessions: string[];
  /** It would replace the library's skill of the same name. */
  improves: boolean;
  at_ms: number;
  text: string | null;
  /** The library's file of that name; null for a new skill. */
  current: string | null;
}

/** What followed the main turns that carried one version. */
export interface VersionEffect {
  turns: number;
  labelled: number;
  corrections: number;
  repeats: number;
  thanks: number;
  errors: number;
}

export interface SkillVersion {
  n: number;
  written_ms: number;
  replaced_ms: number;
  /** What replaced it: learned, approved, edited, team, imported, rollback, deleted. */
  reason: string;
  text: string | null;
  effect: VersionEffect | null;
}

export interface SkillHistory {
  name: string;
  current: { text: string | null; since_ms: number; effect: VersionEffect | null };
  /** Newest first. */
  versions: SkillVersion[];
}

/** "12 turns, 2 corrections, 1 thanks", or what is known when nothing carried it. */
export function effectLine(e: VersionEffect | null): string {
  if (!e) return 'no figures';
  if (e.turns === 0) return 'carried by no turn';
  const parts = [`${e.turns} ${e.turns === 1 ? 'turn' : 'turns'}`];
  if (e.corrections) parts.push(`${e.corrections} corrected`);
  if (e.repeats) parts.push(`${e.repeats} repeated`);
  if (e.thanks) parts.push(`${e.thanks} thanked`);
  if (e.errors) parts.push(`${e.errors} failed`);
  return parts.join(', ');
}
