import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import { tick } from 'svelte';
import WechatPanel from '../src/components/WechatPanel.svelte';
import { ApiError } from '../src/lib/api';
import { linkOf, qrSize, qrSrc, wechatView } from '../src/lib/wechat';
import { fakeApi, until } from './helpers';
import { CONNECTED, QR_SVG, QR_URL, SCANNING, wechat } from './wechatData';

const PREFIX = 'data:image/svg+xml;charset=utf-8,';
const gets = (api: ReturnType<typeof fakeApi>) => api.calls.filter((c) => c.method === 'GET' && c.path === '/api/wechat').length;

describe('WechatPanel', () => {
  it('shows nothing when WeChat is off, and nothing but the line when it was asked for another agent', async () => {
    const off = fakeApi({ 'GET /api/wechat': wechat({ enabled: false, installed: false, state: 'off', line: 'WeChat is off.' }) });
    const seen: string[] = [];
    const first = render(WechatPanel, { api: off, onchange: (s: { state: string }) => seen.push(s.state) });
    // Once the answer is taken and drawn, the panel is what it will stay.
    await until(() => expect(seen).toEqual(['off']));
    await tick();
    expect(screen.queryByRole('heading', { name: 'WeChat' })).toBeNull();
    expect(screen.queryByText('WeChat is off.')).toBeNull();
    first.unmount();

    const line = 'WeChat works with OpenClaw only; this MetaClaw serves copaw.';
    const other = fakeApi({ 'GET /api/wechat': wechat({ agent: 'copaw', supported: false, installed: false, state: 'unsupported', line }) });
    render(WechatPanel, { api: other });
    expect(await screen.findByText(line)).toBeTruthy();
    expect(screen.queryByRole('button')).toBeNull();
    expect(screen.queryByRole('img')).toBeNull();
  });

  it('says nothing when the state cannot be read yet (the status panel reports a dead engine)', async () => {
    const api = fakeApi({ 'GET /api/wechat': () => new ApiError(0, 'Cannot reach MetaClaw: refused') });
    render(WechatPanel, { api });
    await until(() => expect(gets(api)).toBe(1));
    // The panel awaited the answer before this test did: it has taken the refusal when this returns.
    await expect(vi.mocked(api.get).mock.results[0].value).rejects.toThrow('Cannot reach MetaClaw');
    await tick();
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('shows the QR code as an image of the SVG given, big enough, with the link for the phone', async () => {
    const api = fakeApi({ 'GET /api/wechat': SCANNING });
    render(WechatPanel, { api, pollMs: 60_000 });
    const img = (await screen.findByRole('img', { name: 'WeChat login QR code' })) as HTMLImageElement;
    const src = img.getAttribute('src') ?? '';
    expect(src.startsWith(PREFIX)).toBe(true);
    expect(decodeURIComponent(src.slice(PREFIX.length))).toBe(QR_SVG);
    // 29 units → 9 px each: 261 px, at least 256.
    expect(img.style.width).toBe('261px');
    expect(img.style.height).toBe('261px');
    // The markup itself never enters the page.
    expect(document.querySelector('svg path')).toBeNull();
    expect(screen.getByRole('link', { name: QR_URL }).getAttribute('href')).toBe(QR_URL);
    expect(screen.getByText(/open this link on the phone instead/)).toBeTruthy();
    expect(screen.getByText('Scan the QR code with WeChat.')).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Log in to WeChat again' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it("posts the login, shows the API's refusal, then follows a started login", async () => {
    let refuse = true;
    const api = fakeApi({
      'GET /api/wechat': wechat({ state: 'failed', error: 'the QR code expired before it was scanned' }),
      'POST /api/wechat/login': () =>
        refuse ? new ApiError(409, 'A WeChat install or login is already running.') : wechat({ state: 'logging_in', line: 'Starting the WeChat login…', running: true }),
    });
    render(WechatPanel, { api, pollMs: 60_000 });
    expect((await screen.findByRole('alert')).textContent).toBe('the QR code expired before it was scanned');
    const button = screen.getByRole('button', { name: 'Log in to WeChat again' }) as HTMLButtonElement;
    expect(button.disabled).toBe(false);

    await fireEvent.click(button);
    expect(await screen.findByText('A WeChat install or login is already running.')).toBeTruthy();
    expect(api.calls.filter((c) => c.method === 'POST' && c.path === '/api/wechat/login')).toHaveLength(1);

    refuse = false;
    await fireEvent.click(button);
    expect(await screen.findByText('Starting the WeChat login…')).toBeTruthy();
    expect(button.disabled).toBe(true);
    expect(screen.queryByText('A WeChat install or login is already running.')).toBeNull();
  });

  it('polls fast while a scan is awaited and slowly once WeChat is connected', async () => {
    // The polls run when the test moves the clock, not when a busy machine gets round to them.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const answers = [SCANNING, SCANNING, SCANNING, CONNECTED];
      let i = 0;
      const api = fakeApi({ 'GET /api/wechat': () => answers[Math.min(i++, answers.length - 1)] });
      const seen: string[] = [];
      render(WechatPanel, { api, pollMs: 1500, idleMs: 60_000, onchange: (s: { state: string }) => seen.push(s.state) });

      for (const n of [1, 2, 3]) {
        await until(() => expect(seen).toHaveLength(n));
        vi.advanceTimersByTime(1499);
        expect(gets(api)).toBe(n);
        vi.advanceTimersByTime(1);
        expect(gets(api)).toBe(n + 1);
      }
      await until(() => screen.getByText('WeChat is connected.'));
      expect(screen.queryByRole('img')).toBeNull();
      expect(seen).toEqual(['waiting_for_scan', 'waiting_for_scan', 'waiting_for_scan', 'connected']);
      vi.advanceTimersByTime(59_999);
      expect(gets(api)).toBe(4);
      vi.advanceTimersByTime(1);
      expect(gets(api)).toBe(5);
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops polling when it is destroyed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const api = fakeApi({ 'GET /api/wechat': SCANNING });
      const seen: string[] = [];
      const { unmount } = render(WechatPanel, { api, pollMs: 1500, onchange: (s: { state: string }) => seen.push(s.state) });
      await until(() => expect(seen).toHaveLength(1));
      vi.advanceTimersByTime(1500);
      await until(() => expect(seen).toHaveLength(2));
      unmount();
      vi.advanceTimersByTime(60_000);
      expect(gets(api)).toBe(2);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('wechat helpers', () => {
  it('shows the panel only for OpenClaw with something to show', () => {
    expect(wechatView(null)).toBe('none');
    expect(wechatView(wechat({ enabled: false, installed: false, state: 'off' }))).toBe('none');
    expect(wechatView(wechat({ enabled: false, installed: true }))).toBe('panel');
    expect(wechatView(wechat({ enabled: false, installed: false, running: true }))).toBe('panel');
    expect(wechatView(wechat({ supported: false, state: 'unsupported' }))).toBe('line');
    expect(wechatView(wechat({ enabled: false, supported: false, state: 'off' }))).toBe('none');
  });

  it('sizes the image in whole units per pixel and links only web addresses', () => {
    expect(qrSrc('<svg/>')).toBe(`${PREFIX}%3Csvg%2F%3E`);
    expect(qrSize('<svg viewBox="0 0 49 49">')).toBe(294);
    expect(qrSize('<svg width="392" height="392" viewBox="0 0 392 392">')).toBe(392);
    expect(qrSize('<svg width="330px" height="330px">')).toBe(330);
    // As the engine's qrcode renderer writes it (41 modules with the quiet zone, 7 units each).
    expect(qrSize('<?xml version="1.0" standalone="yes"?><svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="287" height="287" viewBox="0 0 287 287" shape-rendering="crispEdges">')).toBe(287);
    expect(qrSize('<svg viewBox="0 0 1000 1000">')).toBe(320);
    expect(qrSize('<svg>')).toBe(320);
    expect(linkOf('javascript:alert(1)')).toBeNull();
    expect(linkOf(QR_URL)).toBe(QR_URL);
  });
});
