// WeChat channel states as `/api/wechat` answers them.

import type { WechatStatus } from '../src/lib/wechat';

/** A tiny standalone SVG (29 units: a version-1 code with its quiet zone). */
export const QR_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 29 29" shape-rendering="crispEdges"><rect width="29" height="29" fill="#fff"/><path d="M4 4h7v7H4z" fill="#000"/></svg>';
export const QR_URL = 'https://liteapp.weixin.qq.com/q/abc123?qrcode=xyz';

export function wechat(over: Partial<WechatStatus> = {}): WechatStatus {
  return {
    enabled: true,
    agent: 'openclaw',
    supported: true,
    installed: true,
    state: 'installed',
    line: "OpenClaw's WeChat plugin is installed; log in to WeChat to use it.",
    running: false,
    qr: null,
    error: null,
    ...over,
  };
}

export const SCANNING = wechat({ state: 'waiting_for_scan', line: 'Scan the QR code with WeChat.', running: true, qr: { url: QR_URL, svg: QR_SVG } });
export const CONNECTED = wechat({ state: 'connected', line: 'WeChat is connected.' });
