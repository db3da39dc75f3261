import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import SkillDetail from '../src/components/SkillDetail.svelte';
import Skills from '../src/screens/Skills.svelte';
import { ApiError } from '../src/lib/api';
import type { Skill } from '../src/lib/types';
import { fakeApi, until } from './helpers';

const FILE = '---\nname: tidy-commits\ndescription: Keep commits small\n---\nOne change per commit.\n';

function skill(disabled = false): Skill {
  return {
    name: 'tidy-commits',
    description: 'Keep commits small',
    category: null,
    tags: [],
    always: false,
    disabled,
    body: 'One change per commit.\n',
    file: FILE,
  };
}

describe('SkillDetail', () => {
  it('sends the edited file with PUT and shows the server error in words', async () => {
    const api = fakeApi({ 'GET /api/skills/tidy-commits': skill() });
    const bodies: unknown[] = [];
    api.put = async <T,>(path: string, body: unknown): Promise<T> => {
      api.calls.push({ method: 'PUT', path, body });
      bodies.push(body);
      throw new ApiError(400, 'the file names `other`; renaming is not an edit');
    };
    render(SkillDetail, { api, name: 'tidy-commits', onClose: () => {} });

    await fireEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    const area = screen.getByRole('textbox', { name: /Skill file/ }) as HTMLTextAreaElement;
    expect(area.value).toBe(FILE);
    const edited = FILE.replace('One change', 'Exactly one change');
    await fireEvent.input(area, { target: { value: edited } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));

    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toBe('Not saved: the file names `other`; renaming is not an edit');
    expect(bodies).toEqual([{ text: edited }]);
    expect(api.calls.at(-1)?.path).toBe('/api/skills/tidy-commits');
    // The draft stays open so the user can fix it.
    expect((screen.getByRole('textbox', { name: /Skill file/ }) as HTMLTextAreaElement).value).toBe(edited);
  });

  it('disables with POST to /disable and the button flips to Enable', async () => {
    const api = fakeApi({
      'GET /api/skills/tidy-commits': skill(false),
      'POST /api/skills/tidy-commits/disable': skill(true),
    });
    render(SkillDetail, { api, name: 'tidy-commits', onClose: () => {} });

    await fireEvent.click(await screen.findByRole('button', { name: 'Disable' }));
    expect(await screen.findByRole('button', { name: 'Enable' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Disable' })).toBeNull();
    expect(api.calls.filter((c) => c.method === 'POST').map((c) => c.path)).toEqual(['/api/skills/tidy-commits/disable']);
    expect(screen.getByText('Disabled.')).toBeTruthy();
  });

  it('a saved edit reloads the library list', async () => {
    let listed = 0;
    const api = fakeApi({
      'GET /api/skills': () => {
        listed++;
        return { skills: [skill()], errors: [] };
      },
      'GET /api/skills/tidy-commits': skill(),
      'GET /api/skills/log': { events: [], counts: { events: 0, failed: 0, skills_added: 0, skills_improved: 0, last_at_ms: null } },
    });
    api.put = async <T,>(_path: string, body: unknown): Promise<T> => ({ ...skill(), body: (body as { text: string }).text }) as T;
    render(Skills, { api });

    await fireEvent.click(await screen.findByRole('button', { name: 'tidy-commits' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    await until(() => expect(listed).toBe(1));
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('Saved.')).toBeTruthy();
    await until(() => expect(listed).toBe(2));
  });
});
