import { describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/svelte';
import SkillList from '../src/components/SkillList.svelte';
import SkillDetail from '../src/components/SkillDetail.svelte';
import type { Skill, SkillSource } from '../src/lib/types';
import { fakeApi } from './helpers';

function skill(name: string, source: SkillSource, origin?: string): Skill {
  return {
    name, description: `${name} description`, category: null, tags: [], always: false, disabled: false, source,
    provenance: origin ? { origin } : null, body: 'Body.',
  };
}

describe('skill sources', () => {
  it('the list says where each skill came from, in words', async () => {
    const sources: SkillSource[] = ['builtin', 'user', 'evolved', 'imported', 'team'];
    const api = fakeApi({ 'GET /api/skills': { skills: sources.map((s) => skill(`from-${s}`, s)), errors: [] } });
    render(SkillList, { api, onSelect: () => {} });

    const items = await screen.findAllByRole('listitem');
    const words = items.map((li) => li.querySelector('.source')?.textContent);
    expect(words).toEqual(['built-in', 'user', 'learned', 'imported', 'team']);
  });

  it('the detail says the source and, for an imported skill, where from', async () => {
    const api = fakeApi({ 'GET /api/skills/release-notes': skill('release-notes', 'imported', '/home/u/skills.zip') });
    render(SkillDetail, { api, name: 'release-notes', onClose: () => {} });
    expect((await screen.findByTestId('skill-source')).textContent?.trim()).toBe('Source: imported (from /home/u/skills.zip)');
  });
});
