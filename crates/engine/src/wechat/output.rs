//! Reading what the WeChat plugin's installer and login print: the QR code's link (the
//! block-art QR itself is dropped: MetaClaw draws its own from the link, as an image in the
//! window and as text in the terminal), and its Chinese status lines in English.

/// One line of the plugin's output, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// Terminal QR art, ANSI noise or a blank line: not worth a log line.
    Noise,
    /// The link the QR code encodes: scanning it (or opening it on the phone) logs in.
    QrLink(String),
    /// A status line, in English when it is one the plugin is known to print.
    Said {
        text: String,
        /// The plugin says the account is now linked.
        connected: bool,
    },
}

/// The plugin's status lines (`openclaw-weixin` 2.4: `src/channel.ts`, `src/auth/login-qr.ts`,
/// and the installer's), matched by a fragment, with their English text.
const KNOWN: &[(&str, &str, bool)] = &[
    ("正在启动", "Starting the WeChat login…", false),
    (
        "扫描以下二维码",
        "Scan the QR code with WeChat on your phone to connect.",
        false,
    ),
    (
        "若二维码未能显示",
        "If the QR code does not show, open the link on your phone instead.",
        false,
    ),
    ("正在等待操作", "Waiting for the scan…", false),
    ("等待连接", "Waiting for the scan…", false),
    ("已扫码", "Scanned: confirm the login on your phone.", false),
    (
        "二维码已过期",
        "The QR code expired; a new one follows.",
        false,
    ),
    ("已将此 OpenClaw 连接到微信", "Connected to WeChat.", true),
    ("连接成功", "Connected to WeChat.", true),
];

pub fn read(raw: &str) -> Line {
    let line = strip_ansi(raw);
    let line = line.trim();
    if line.is_empty() || is_qr_art(line) {
        return Line::Noise;
    }
    if let Some(link) = qr_link(line) {
        return Line::QrLink(link);
    }
    if let Some((_, english, connected)) = KNOWN.iter().find(|(zh, _, _)| line.contains(zh)) {
        return Line::Said {
            text: (*english).to_owned(),
            connected: *connected,
        };
    }
    Line::Said {
        text: line.to_owned(),
        connected: false,
    }
}

/// A WeChat login link: `https://…weixin.qq.com/…` (the plugin prints it alone on a line,
/// under the QR art).
fn qr_link(line: &str) -> Option<String> {
    let start = line.find("https://")?;
    let link: String = line[start..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    let host = link
        .trim_start_matches("https://")
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    let wechat = host == "weixin.qq.com" || host.ends_with(".weixin.qq.com");
    wechat.then_some(link)
}

/// `qrcode-terminal`'s half blocks (or full blocks) and spaces, nothing else.
fn is_qr_art(line: &str) -> bool {
    let mut blocks = 0;
    for c in line.chars() {
        match c {
            '▀' | '▄' | '█' => blocks += 1,
            ' ' | '\u{a0}' => {}
            _ => return false,
        }
    }
    blocks > 0
}

/// Colour and cursor escapes (`ESC [ … letter`) out.
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qr_art_and_blank_lines_are_noise() {
        assert_eq!(read("▄▄▄▄▄▄▄ ▄ ▄▄ ▄▄▄▄▄▄▄"), Line::Noise);
        assert_eq!(read("█ ▄▄▄ █ ▀█▀  █ ▄▄▄ █"), Line::Noise);
        assert_eq!(read("   "), Line::Noise);
        assert_eq!(read("\u{1b}[32m\u{1b}[0m"), Line::Noise);
        // A line with words in it is not art.
        assert!(matches!(read("█ done"), Line::Said { .. }));
    }

    #[test]
    fn the_login_link_is_found_and_other_links_are_not_it() {
        let url = "https://liteapp.weixin.qq.com/q/7GiQu1?qrcode=abc123&bot_type=3";
        assert_eq!(read(url), Line::QrLink(url.into()));
        assert_eq!(read(&format!("  链接: {url} ")), Line::QrLink(url.into()));
        for other in [
            "see https://docs.openclaw.ai/channels",
            "https://weixin.qq.com.evil.example/q/1",
        ] {
            assert!(matches!(read(other), Line::Said { .. }), "{other}");
        }
    }

    #[test]
    fn known_status_lines_are_translated_and_connected_is_noticed() {
        assert_eq!(
            read("\u{1b}[1m用手机微信扫描以下二维码，以继续连接：\u{1b}[0m"),
            Line::Said {
                text: "Scan the QR code with WeChat on your phone to connect.".into(),
                connected: false
            }
        );
        assert_eq!(
            read("已将此 OpenClaw 连接到微信。"),
            Line::Said {
                text: "Connected to WeChat.".into(),
                connected: true
            }
        );
        assert_eq!(
            read("added 3 packages in 2s"),
            Line::Said {
                text: "added 3 packages in 2s".into(),
                connected: false
            }
        );
    }
}
