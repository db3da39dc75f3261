import { describe, expect, it } from 'vitest';
import { createApi } from '../src/lib/api';
import { fetchRoutes, reply } from './fetchRoutes';

describe('createApi put', () => {
  it('sends PUT with a JSON body and the token, and turns an error into its sentence', async () => {
    const { fetch, calls } = fetchRoutes({
      'PUT /api/skills/a': reply(400, { error: { message: 'frontmatter: missing `name`' } }),
    });
    const api = createApi({ token: () => 't', fetch });
    await expect(api.put?.('/api/skills/a', { text: 'x' })).rejects.toThrow('frontmatter: missing `name`');
    expect(calls).toEqual([expect.objectContaining({ method: 'PUT', path: '/api/skills/a', body: { text: 'x' } })]);
  });
});
