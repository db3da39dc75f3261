// The Skills screen with `skills.review: ask`: a learned skill waits in "Proposed skills" with
// the session it came from and its diff, is not in the library until approved, and "Approve"
// makes it live; a later edit adds a version to its history, whose diff shows what changed,
// and "Roll back" restores the earlier file byte for byte.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { admin, chat, fakeConfig, startStack, until } from '../lib/stack.mjs';
import { launchBrowser, nav, openUi } from '../lib/browser.mjs';

let stack;
let browser;
before(async () => {
  stack = await startStack({ config: fakeConfig('skills:\n  auto_evolve: false\n  review: ask\nmemory:\n  enabled: false\n') });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

const RULE = 'From now on, write dates as YYYY-MM-DD in every report.';

test('a proposal is shown with its diff, approved into the library, edited and rolled back', { timeout: 90000 }, async () => {
  await chat(stack, RULE, { session: 's-dates' });
  const learned = await admin(stack, 'POST', '/api/skills/evolve', { session_id: 's-dates' });
  assert.equal(learned.outcome, 'proposed', JSON.stringify(learned));
  const name = learned.proposed[0];
  const file = join(stack.home, 'skills', name, 'SKILL.md');

  const { page, step } = await openUi(browser, stack, 'skills');
  const proposals = page.getByRole('region', { name: /Proposed skills/ });
  const item = proposals.getByRole('listitem').filter({ hasText: name });
  await step('open the Skills screen: the proposal waits, with its session and diff', async () => {
    await nav(page, 'Skills').click();
    await page.getByRole('heading', { name: 'Proposed skills (1)' }).waitFor();
    await item.getByText('Learned from: s-dates').waitFor();
    await item.getByText('new skill', { exact: false }).waitFor();
    const diff = item.getByLabel(`Changes of ${name}`);
    await diff.locator('[data-op="add"]', { hasText: 'YYYY-MM-DD' }).first().waitFor();
    assert.equal(await diff.locator('[data-op="del"]').count(), 0, 'a new skill removes nothing');
  });
  await assert.rejects(admin(stack, 'GET', `/api/skills/${name}`), /404/, 'not in the library while proposed');

  await step('approve it: the list empties and the skill is in the library', async () => {
    await item.getByRole('button', { name: `Approve ${name}` }).click();
    await proposals.getByText('No learned skill waits for approval.').waitFor();
    await proposals.getByText(`Approved ${name}: it is in the library.`).waitFor();
  });
  const approved = readFileSync(file);
  assert.ok(approved.toString().includes('YYYY-MM-DD'));

  // An edit (as the detail view's editor makes) gives the skill a history.
  const edited = approved.toString().replace('YYYY-MM-DD', 'DD/MM/YYYY');
  assert.notEqual(edited, approved.toString());
  await admin(stack, 'PUT', `/api/skills/${name}`, { text: edited });

  const history = page.getByRole('region', { name: `History of ${name}` });
  await step('open the skill: version 1 and what changed after it', async () => {
    await page.getByRole('button', { name, exact: true }).first().click();
    const v1 = history.getByRole('listitem', { name: 'Version 1' });
    await v1.waitFor();
    await v1.getByRole('button', { name: 'Changes after version 1' }).click();
    const diff = history.getByLabel('What changed after version 1');
    await diff.locator('[data-op="del"]', { hasText: 'YYYY-MM-DD' }).first().waitFor();
    await diff.locator('[data-op="add"]', { hasText: 'DD/MM/YYYY' }).first().waitFor();
  });
  await step('roll back to version 1: the approved file is back, byte for byte', async () => {
    await history.getByRole('button', { name: 'Roll back to version 1' }).click();
    await history.getByText(`Restored version 1 of ${name}.`).waitFor();
  });
  await until('the approved file restored', () => Buffer.compare(readFileSync(file), approved) === 0);
});
