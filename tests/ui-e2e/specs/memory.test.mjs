// The Memory screen: search (with the reason a unit matched), edit, forget.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, fakeConfig, startStack } from '../lib/stack.mjs';
import { launchBrowser, nav, openUi } from '../lib/browser.mjs';

let stack;
let browser;
before(async () => {
  stack = await startStack({ config: fakeConfig('skills:\n  enabled: false\n') });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

const SEEDS = [
  { kind: 'preference', content: 'Prefers tabs over spaces in Go code', tags: ['style'] },
  { kind: 'semantic', content: 'The staging database runs PostgreSQL 15 on port 5433', tags: ['infra'] },
  { kind: 'project_state', content: 'The billing migration is blocked on the invoice export', tags: ['billing'] },
];

test('search finds a unit with its reason; an edit is saved; a forgotten unit leaves the active list', { timeout: 60000 }, async () => {
  const ids = [];
  for (const s of SEEDS) ids.push((await admin(stack, 'POST', '/api/memory', s)).id);
  assert.equal(ids.filter(Boolean).length, SEEDS.length, 'POST /api/memory answers with the new id');
  const staging = ids[1];

  const { page, step } = await openUi(browser, stack, 'memory');
  await step('open the Memory screen', async () => {
    await nav(page, 'Memory').click();
    await page.getByRole('heading', { name: 'Memory', level: 1 }).waitFor();
    await page.getByText(`1–${SEEDS.length} of ${SEEDS.length}`, { exact: true }).waitFor();
  });

  const search = page.getByRole('search');
  await step('search for the staging database', async () => {
    await search.getByLabel('What to look for').fill('staging database');
    await search.getByRole('button', { name: 'Search' }).click();
  });
  const hits = page.getByRole('region', { name: 'Search' }).getByRole('listitem');
  await step('the hit is the staging unit, with the terms it matched', async () => {
    await hits.first().waitFor();
    const first = hits.first();
    await first.getByRole('button', { name: SEEDS[1].content }).waitFor();
    await first.getByText(/matched 'staging', 'database'.*importance/).waitFor();
  });
  assert.equal(await hits.count(), 1, 'only the staging unit mentions staging databases');

  const detail = page.getByRole('region', { name: 'Memory', exact: true });
  const edited = 'The staging database runs PostgreSQL 16 on port 5434';
  await step('open the hit and edit its text', async () => {
    await hits.first().getByRole('button', { name: SEEDS[1].content }).click();
    await detail.getByText(SEEDS[1].content, { exact: true }).waitFor();
    await detail.getByRole('button', { name: 'Edit' }).click();
    const form = detail.getByRole('form', { name: 'Edit memory' });
    await form.getByLabel('Content').fill(edited);
    await form.getByRole('button', { name: 'Save' }).click();
  });
  await step('the panel shows the saved text, version 2', async () => {
    await detail.getByText(edited, { exact: true }).waitFor();
    await detail.getByText(/\(version 2\)/).waitFor();
  });

  await step('after a reload the list shows the new text and not the old', async () => {
    await page.reload();
    await page.getByRole('heading', { name: 'Memory', level: 1 }).waitFor();
    await page.getByRole('button', { name: `Open memory ${staging}` }).filter({ hasText: edited }).waitFor();
    assert.equal(await page.getByText(SEEDS[1].content, { exact: true }).count(), 0);
  });
  assert.equal((await admin(stack, 'GET', `/api/memory/${staging}`)).unit.content, edited);

  await step('forget it (confirming the dialog)', async () => {
    page.once('dialog', (d) => d.accept());
    await page.getByRole('button', { name: `Open memory ${staging}` }).click();
    await detail.getByRole('button', { name: 'Forget' }).click();
    await detail.getByRole('button', { name: 'Restore' }).waitFor();
  });
  await step('it is gone from the active list', async () => {
    await page.getByRole('button', { name: `Open memory ${staging}` }).waitFor({ state: 'detached' });
    await page.getByText(`1–${SEEDS.length - 1} of ${SEEDS.length - 1}`, { exact: true }).waitFor();
  });
  const active = await admin(stack, 'GET', '/api/memory');
  assert.deepEqual(active.units.map((u) => u.id).sort(), [ids[0], ids[2]].sort());
});
