import { describe, expect, it } from 'vitest';
import {
  correctedCell, getEffect, holdoutSentence, itemSentence, judgeCell, memoryEffect, notInjected, overallSentence, rateText, skillEffect, usedText,
} from '../src/lib/effect';
import { fakeApi } from './helpers';
import { arm, effectReport, holdout, item, outcome } from './effectData';

describe('effect', () => {
  it('asks /api/effect for 30 days unless told otherwise', async () => {
    const api = fakeApi({ 'GET /api/effect': effectReport() });
    expect((await getEffect(api)).min_sample).toBe(20);
    await getEffect(api, 7);
    expect(api.calls.map((c) => [c.path, c.params])).toEqual([
      ['/api/effect', { days: 30 }],
      ['/api/effect', { days: 7 }],
    ]);
  });

  it('gives a rate in whole percent, and a dash where nothing was labelled (not 0%)', () => {
    expect(rateText(0.12)).toBe('12%');
    expect(rateText(0.125)).toBe('13%');
    expect(rateText(0)).toBe('0%');
    expect(rateText(1)).toBe('100%');
    expect(rateText(null)).toBe('—');
  });

  it('says what followed the turns that carried an item, against the turns without it', () => {
    expect(itemSentence(item())).toBe(
      'Injected 42 times in the last 30 days (3,100 block tokens); 12% of the answers that followed were corrected or asked again (3 of 25), against 5% without it.',
    );
    // No comparison to make: the rate alone.
    expect(itemSentence(item({ without_rate: null }))).toBe(
      'Injected 42 times in the last 30 days (3,100 block tokens); 12% of the answers that followed were corrected or asked again (3 of 25).',
    );
    expect(itemSentence(item({ turns: 1, block_tokens: 1, errors: 1 }), 7)).toBe(
      'Injected once in the last 7 days (1 block token); 12% of the answers that followed were corrected or asked again (3 of 25), against 5% without it. 1 of those turns failed.',
    );
    expect(itemSentence(item({ turns: 2_500 }), 1)).toMatch(/^Injected 2,500 times in the last day /);
    // The user's explicit word that it worked, when there is any.
    expect(itemSentence(item({ thanks: 7, thanks_rate: 0.28 }))).toBe(
      'Injected 42 times in the last 30 days (3,100 block tokens); 12% of the answers that followed were corrected or asked again (3 of 25), against 5% without it. The user said it worked after 7.',
    );
  });

  it('says when no answer has followed yet instead of a rate', () => {
    const waiting = item({ labelled: 0, corrections: 0, repeats: 0, correction_rate: null });
    expect(itemSentence(waiting)).toBe('Injected 42 times in the last 30 days (3,100 block tokens); no answer followed yet.');
    expect(itemSentence({ ...waiting, errors: 3 })).toBe(
      'Injected 42 times in the last 30 days (3,100 block tokens); no answer followed yet. 3 of those turns failed.',
    );
    expect(itemSentence({ ...waiting, errors: 1, retries: 1 })).toBe(
      'Injected 42 times in the last 30 days (3,100 block tokens); no answer followed yet. 1 of those turns failed. The agent sent one again.',
    );
    expect(itemSentence({ ...waiting, retries: 4 })).toMatch(/followed yet\. The agent sent 4 again\.$/);
    expect(notInjected()).toBe('Not injected in the last 30 days.');
    expect(notInjected(1)).toBe('Not injected in the last day.');
  });

  it('finds a skill by name and a memory by id, and gives the short figures of a table and list', () => {
    const r = effectReport();
    expect(skillEffect(r, 'tidy-commits')?.turns).toBe(3);
    expect(skillEffect(r, '01HMEMORY')).toBeUndefined();
    expect(memoryEffect(r, '01HMEMORY')?.turns).toBe(7);
    expect(memoryEffect(r, 'tidy-commits')).toBeUndefined();
    expect(usedText(item({ turns: 1_234 }))).toBe('used 1,234×');
    expect(correctedCell(outcome())).toBe('20 (8%)');
    expect(correctedCell(outcome({ labelled: 0, corrections: 0, repeats: 0, correction_rate: null }))).toBe('0 (—)');
    expect(judgeCell(outcome())).toBe('—');
    expect(judgeCell(outcome({ judged: 3, mean_reward: 0.4251 }))).toBe('0.43');
    expect(judgeCell(outcome({ judged: 3, mean_reward: 0 }))).toBe('0.00');
  });

  it('says how to turn the holdout on when it is off', () => {
    const off = holdoutSentence(holdout({ share: 0, verdict: null }), 20);
    expect(off).toBe(
      "The holdout is off, so turns with and without MetaClaw's block are not compared. To turn it on, set learning.holdout between 0 and 0.5 in Settings, or run `metaclaw config set learning.holdout 0.1`.",
    );
  });

  it('claims nothing until both sides have enough labelled turns, and says how far each is', () => {
    const early = holdout({ share: 0.5, verdict: null, with: arm({ labelled: 12 }), without: arm({ labelled: 3 }) });
    expect(holdoutSentence(early, 20)).toBe(
      "50% of sessions are held out (served without MetaClaw's block). So far 12 labelled turns with MetaClaw and 3 held out, of the 20 each side needs; no comparison is claimed yet.",
    );
    expect(holdoutSentence({ ...early, with: arm({ labelled: 1_500 }) }, 2_000)).toMatch(/So far 1,500 labelled turns .* of the 2,000 each side needs/);
  });

  it("gives the API's verdict once there is one", () => {
    expect(holdoutSentence(holdout(), 20)).toBe('Held-out turns were corrected or asked again more often (14% against 8%).');
  });

  it('says every main turn of the window in one sentence', () => {
    expect(overallSentence(outcome())).toBe('412 main turns; 8% of the answers the user followed up on were corrected or asked again (20 of 250).');
    expect(overallSentence(outcome({ turns: 1, labelled: 0, corrections: 0, repeats: 0, correction_rate: null }))).toBe(
      '1 main turn; the user has not followed up on any answer yet.',
    );
    expect(overallSentence(outcome({ turns: 0, labelled: 0, correction_rate: null }), 7)).toBe('No main turns in the last 7 days.');
  });
});
