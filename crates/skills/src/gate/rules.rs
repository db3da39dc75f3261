//! The gate's rules, in one place: what each looks for and why it is dangerous in a skill
//! that is injected into an agent's prompt.
//!
//! Line rules match one line at a time. A match wholly inside quotation marks is a mention
//! ("watch for \"ignore previous instructions\""), not an instruction, and does not count.
//! Download-and-execute needs a real source (a URL or a variable), so a warning written as
//! `curl ... | bash` is not flagged.

use std::sync::LazyLock;

use regex::Regex;

/// A rule's id (stable: shown to users and kept with quarantined skills) and its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub id: &'static str,
    pub reason: &'static str,
}

pub const OVERRIDE: Rule = Rule {
    id: "override-instructions",
    reason: "tells the agent to ignore or replace its instructions",
};
pub const HIDE: Rule = Rule {
    id: "hide-from-user",
    reason: "tells the agent to hide what it does from the user",
};
pub const DOWNLOAD_EXECUTE: Rule = Rule {
    id: "download-and-execute",
    reason: "downloads code and runs it at once",
};
pub const ENCODED_PAYLOAD: Rule = Rule {
    id: "encoded-payload",
    reason: "decodes a hidden payload and runs it",
};
pub const SECRETS: Rule = Rule {
    id: "reads-secrets",
    reason: "reads keys, tokens or passwords (SSH keys, .env files, keychains)",
};
pub const SENDS_DATA: Rule = Rule {
    id: "sends-data",
    reason: "sends files or data to an outside address",
};
pub const HIDDEN_TEXT: Rule = Rule {
    id: "hidden-unicode",
    reason: "contains invisible or direction-changing characters",
};
pub const OVERSIZED: Rule = Rule {
    id: "oversized",
    reason: "is larger than a skill should be",
};

/// Most bytes of a skill's name, description, tags and body together (the built-in skills
/// are under 2.1 KB; the evolver writes far less).
pub const MAX_BYTES: usize = 16 * 1024;

/// `(rule, pattern)`, matched line by line, case-insensitively.
static LINE_RULES: LazyLock<Vec<(Rule, Regex)>> = LazyLock::new(|| {
    let rules: [(Rule, &str); 6] = [
        (
            OVERRIDE,
            r"\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|any|other|system|developer|safety)\b[^.\n]{0,30}\b(instructions?|prompts?|rules|guidelines|directives|policies)\b|\byou are now\b[^.\n]{0,30}\b(unrestricted|jailbroken|dan|developer mode)\b|\bnew (system )?instructions\s*:",
        ),
        (
            HIDE,
            r"\b(do not|don't|never|without)\s+(tell|telling|inform|informing|mention|mentioning|show|showing|reveal|revealing|notify|notifying|alert|alerting|ask|asking)\b[^.\n]{0,20}\b(the )?user\b|\b(hide|conceal|keep)\b[^.\n]{0,40}\bfrom the user\b|\b(silently|quietly|secretly)\s+(run|execute|send|upload|install|delete|download|copy|post|forward)\b",
        ),
        (
            DOWNLOAD_EXECUTE,
            r#"\b(curl|wget|fetch)\b[^|\n]*(https?://|\$\{?[a-z_(])[^|\n]*\|\s*(sudo\s+)?(env\s+)?(ba|z|k|da|fi)?sh\b|\b(curl|wget)\b[^|\n]*(https?://|\$\{?[a-z_(])[^|\n]*\|\s*(sudo\s+)?(python3?|perl|ruby|node)\b|\b(iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring)\b[^\n]*(\|\s*(iex|invoke-expression)\b|\biex\b)|\b(iex|invoke-expression)\s*\(\s*(new-object|\(new-object|iwr|irm|invoke-webrequest)|(bash|sh|zsh)\s+<\(\s*(curl|wget)\b|\b(eval|sh -c|bash -c)\s+["']?\$\((curl|wget)\b"#,
        ),
        (
            ENCODED_PAYLOAD,
            r"\bbase64\s+(-d|--decode|-D)\b[^\n]*\|\s*(sudo\s+)?(ba|z|da)?sh\b|\|\s*base64\s+(-d|--decode|-D)\b[^\n]*\|\s*(sudo\s+)?(ba|z|da)?sh\b|(\bfrombase64string\b|\s-(encodedcommand|enc|e)\b)\s*\(?\s*['\x22]?[a-z0-9+/=]{20,}|\becho\s+['\x22]?[a-z0-9+/]{40,}={0,2}['\x22]?\s*\|\s*base64",
        ),
        (
            SECRETS,
            r#"\b(cat|head|tail|less|more|type|get-content|cp|scp|rsync|tar|zip|base64|xxd|read|open|upload|send|copy)\b[^\n|;]{0,60}(~/\.ssh\b|\bid_(rsa|ed25519|ecdsa|dsa)\b|\.aws/credentials|\.netrc\b|\.git-credentials|\.npmrc\b|\.pypirc\b|/etc/shadow\b|(^|[\s/'"`])\.env\b)|\bsecurity\s+find-(generic|internet)-password\b|\bsecret-tool\s+lookup\b|\bdump-keychain\b"#,
        ),
        (
            SENDS_DATA,
            r#"\bcurl\b[^\n]*\s(-d|--data|--data-binary|--data-raw|-f|--form|-t|--upload-file)\s+['"]?@|\b(curl|wget)\b[^\n]*\$\(\s*(cat|env|printenv|set)\b|/dev/tcp/|\bnc\b[^\n|]*\s\d{2,5}\s*<|\b(webhook\.site|requestbin|pipedream\.net|ngrok\.io|ngrok-free\.app|burpcollaborator|interact\.sh|pastebin\.com)\b"#,
        ),
    ];
    rules
        .into_iter()
        .filter_map(|(rule, pattern)| {
            // The patterns are constants checked by the tests; one that failed to build
            // would be a bug, logged rather than taking the library down.
            match Regex::new(&format!("(?i){pattern}")) {
                Ok(re) => Some((rule, re)),
                Err(e) => {
                    tracing::error!(rule = rule.id, error = %e, "skill gate rule does not compile");
                    None
                }
            }
        })
        .collect()
});

pub(super) fn line_rules() -> &'static [(Rule, Regex)] {
    &LINE_RULES
}

/// Invisible characters and characters that change the direction of text: both can make a
/// skill say something else to the model than to the person reading it.
pub(super) fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{FEFF}'
        | '\u{00AD}'
        | '\u{180E}'
        | '\u{E0000}'..='\u{E007F}')
}

/// Whether `start..end` of `line` lies inside a pair of quotation marks.
pub(super) fn quoted(line: &str, start: usize, end: usize) -> bool {
    const PAIRS: [(char, char); 4] = [
        ('"', '"'),
        ('\u{201C}', '\u{201D}'),
        ('«', '»'),
        ('「', '」'),
    ];
    PAIRS.iter().any(|&(open, close)| {
        let before = &line[..start];
        let Some(at) = before.rfind(open) else {
            return false;
        };
        // Opening marks before the match must outnumber the closing ones for it to be
        // inside (for straight quotes: an odd count before it).
        let inside = if open == close {
            before.matches(open).count() % 2 == 1
        } else {
            before[at..].find(close).is_none()
        };
        inside && line[end..].contains(close)
    })
}
