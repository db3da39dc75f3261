// Debian's Chromium driven by playwright-core, and named steps that, when they fail, say
// which step it was and what the page showed (its alerts and visible text), with a screenshot.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { FAILURES } from './paths.mjs';
import { logTail, scrub } from './stack.mjs';

export const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
export const VIEWPORT = { width: 1280, height: 800 };

/** A headless browser with a fresh profile; `close()` removes the profile. */
export async function launchBrowser() {
  const profile = mkdtempSync(join(tmpdir(), 'metaclaw-ui-e2e-chromium-'));
  // launchPersistentContext owns the profile directory, so no earlier state can leak in.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: VIEWPORT,
    deviceScaleFactor: 1,
    colorScheme: 'light',
    locale: 'en-GB',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  context.setDefaultTimeout(15000);
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * A page on the stack's UI (`/ui/#token=…`, plus `extra` fragment parameters), and `step`,
 * which runs a named part of a test and turns its failure into a report.
 */
export async function openUi(browser, stack, testName, extra = '') {
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  const url = `${stack.base}/ui/#token=${encodeURIComponent(stack.token)}${extra}`;
  let n = 0;
  async function step(name, fn) {
    n += 1;
    try {
      return await fn();
    } catch (e) {
      throw new Error(await report(page, stack, `${testName}-${String(n).padStart(2, '0')}`, name, e, problems));
    }
  }
  await step('open the UI with the admin token', async () => {
    await page.goto(url);
    await page.getByRole('navigation', { name: 'Screens' }).waitFor();
  });
  return { page, step };
}

async function report(page, stack, file, name, e, problems) {
  // Playwright colours its call log; the report is read as plain text.
  const plain = String(e?.message ?? e).replace(/\x1b\[[0-9;]*m/g, '');
  const lines = [`step "${name}" failed: ${plain}`];
  try {
    const alerts = await page.getByRole('alert').allInnerTexts();
    lines.push(`visible errors on the page: ${alerts.length ? alerts.map((a) => JSON.stringify(a)).join(' | ') : '(none)'}`);
    const text = (await page.locator('main').innerText({ timeout: 2000 })).replace(/\n{2,}/g, '\n').trim();
    lines.push(`page (${page.url().replace(/#.*/, '')}) shows:\n${text.slice(0, 2000)}`);
    mkdirSync(FAILURES, { recursive: true });
    const shot = join(FAILURES, `${file}.png`);
    await page.screenshot({ path: shot, timeout: 5000 });
    lines.push(`screenshot: ${shot}`);
  } catch (inner) {
    lines.push(`(could not read the page: ${inner.message})`);
  }
  if (problems.length) lines.push(`browser console:\n${problems.slice(-10).join('\n')}`);
  lines.push(`metaclaw log (last lines):\n${logTail(stack)}`);
  return scrub(lines.join('\n'));
}

/** The screen link in the header. */
export function nav(page, label) {
  return page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: label, exact: true });
}
