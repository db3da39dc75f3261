// `/api/wechat`: OpenClaw's WeChat plugin, its install and its QR-code login.

import type { Api } from './api';

export type WechatPhase =
  | 'off'
  | 'unsupported'
  | 'missing'
  | 'installing'
  | 'installed'
  | 'logging_in'
  | 'waiting_for_scan'
  | 'connected'
  | 'failed';

export interface WechatStatus {
  enabled: boolean;
  agent: string;
  supported: boolean;
  installed: boolean;
  state: WechatPhase;
  /** One sentence for the reader, shown as is. */
  line: string;
  /** An install or login is under way. */
  running: boolean;
  /** While a scan is awaited: the login URL and a standalone SVG of its QR code. */
  qr: { url: string; svg: string } | null;
  error: string | null;
}

/** Every 1.5 s while something is happening (a QR code expires and is replaced quickly). */
export const BUSY_POLL_MS = 1500;
/** Otherwise now and then, in case the plugin was installed or logged in elsewhere. */
export const IDLE_POLL_MS = 15_000;

/** `/api/events` after which the panel reloads (the engine names each move of the channel). */
export const WECHAT_REFRESH_ON = ['wechat', 'started'];

export function wechatState(api: Api): Promise<WechatStatus> {
  return api.get<WechatStatus>('/api/wechat');
}

/** Starts a new login (a new QR code); answers 202 with the state, `running` set. */
export function wechatLogin(api: Api): Promise<WechatStatus> {
  return api.post<WechatStatus>('/api/wechat/login');
}

/** What the dashboard shows: the panel, only the line (WeChat asked for another agent), or nothing. */
export function wechatView(s: WechatStatus | null): 'panel' | 'line' | 'none' {
  if (!s) return 'none';
  if (s.supported && (s.enabled || s.installed || s.running || s.qr)) return 'panel';
  if (s.enabled && !s.supported) return 'line';
  return 'none';
}

/** Whether to poll fast. */
export function wechatBusy(s: WechatStatus | null): boolean {
  return Boolean(s && (s.running || s.qr));
}

/** The SVG as an <img> source: the markup is never put into the page itself. */
export function qrSrc(svg: string): string {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}

/** The QR image's CSS size: a whole number of SVG units per pixel (crisp module edges for a
 *  camera or a screenshot decoder), at least 256 px; 320 px when the SVG's size is unknown
 *  or too big for that. */
export function qrSize(svg: string): number {
  const m = /viewBox\s*=\s*["']\s*[-\d.]+[\s,]+[-\d.]+[\s,]+([\d.]+)/i.exec(svg) ?? /<svg[^>]*\swidth\s*=\s*["']([\d.]+)(?:px)?["']/i.exec(svg);
  const units = m ? Number(m[1]) : NaN;
  if (!Number.isInteger(units) || units <= 0 || units > 400) return 320;
  return Math.ceil(256 / units) * units;
}

/** The login URL as a link target, or null (shown as text) when it is not http(s). */
export function linkOf(url: string): string | null {
  return /^https?:\/\//i.test(url) ? url : null;
}
