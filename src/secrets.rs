//! Credential detection (gate.md §2.5). A handoff is injected into model context and stored in
//! plain files, so a credential is a contract violation. The matched text is never kept: the
//! scan returns line numbers and kinds only, and the document model blanks the flagged lines.

use std::sync::LazyLock;

use regex::Regex;

/// One flagged line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// 1-based line number.
    pub line: usize,
    pub kind: &'static str,
}

/// The scan: the hits and which lines later steps must treat as empty.
#[derive(Debug, Clone, Default)]
pub struct SecretScan {
    pub hits: Vec<Secret>,
    pub blank: Vec<bool>,
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap()
}

static KEY_BEGIN: LazyLock<Regex> =
    LazyLock::new(|| re(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"));
static KEY_END: LazyLock<Regex> =
    LazyLock::new(|| re(r"-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"));
/// A token rule: its kind, the literal triggers a line must hold before its regex runs (so a
/// clean document compiles no regex at all), and the regex itself, compiled on first use.
struct TokenRule {
    kind: &'static str,
    triggers: &'static [&'static str],
    regex: LazyLock<Regex>,
}

static TOKEN_RULES: [TokenRule; 4] = [
    TokenRule {
        kind: "AWS access key id",
        triggers: &["AKIA", "ASIA"],
        regex: LazyLock::new(|| re(r"(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)")),
    },
    TokenRule {
        kind: "GitHub token",
        triggers: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        regex: LazyLock::new(|| {
            re(
                r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{36,}(?-u:\b)|(?-u:\b)github_pat_[A-Za-z0-9_]{22,}(?-u:\b)",
            )
        }),
    },
    TokenRule {
        kind: "GitLab token",
        triggers: &["glpat-"],
        regex: LazyLock::new(|| re(r"(?-u:\b)glpat-[A-Za-z0-9_-]{20,}")),
    },
    TokenRule {
        kind: "Slack token",
        triggers: &["xox"],
        regex: LazyLock::new(|| re(r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10,}")),
    },
];
static SK_KEY: LazyLock<Regex> = LazyLock::new(|| re(r"(?-u:\b)sk-([A-Za-z0-9_-]{20,})"));

const ASSIGNMENT: &str = "password or token assignment";

/// Scan every line (fences, Pointers, Next and Unverifiable included).
pub fn scan<S: AsRef<str>>(lines: &[S]) -> SecretScan {
    let mut out = SecretScan {
        hits: Vec::new(),
        blank: vec![false; lines.len()],
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].as_ref();
        if line.contains("PRIVATE KEY") && KEY_BEGIN.is_match(line) {
            out.hits.push(Secret {
                line: i + 1,
                kind: "private key block",
            });
            let end = (i..lines.len())
                .find(|&j| {
                    lines[j].as_ref().contains("PRIVATE KEY") && KEY_END.is_match(lines[j].as_ref())
                })
                .unwrap_or(lines.len() - 1);
            out.blank[i..=end].fill(true);
            i = end + 1;
            continue;
        }
        if let Some(kind) = line_kind(line) {
            out.hits.push(Secret { line: i + 1, kind });
            out.blank[i] = true;
        }
        i += 1;
    }
    out
}

fn line_kind(line: &str) -> Option<&'static str> {
    let hit = TOKEN_RULES
        .iter()
        .find(|r| r.triggers.iter().any(|t| line.contains(t)) && r.regex.is_match(line));
    if let Some(rule) = hit {
        return Some(rule.kind);
    }
    let sk = line.contains("sk-")
        && SK_KEY.captures_iter(line).any(|c| {
            let body = c.get(1).map_or("", |m| m.as_str());
            body.bytes().any(|b| b.is_ascii_digit())
                && body.bytes().any(|b| b.is_ascii_alphabetic())
        });
    if sk {
        return Some("sk- API key");
    }
    has_assignment(line).then_some(ASSIGNMENT)
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

const KEY_ENDINGS: [&str; 7] = [
    "password", "passwd", "secret", "token", "api_key", "apikey", "api-key",
];

/// The generic `key = value` rule, over every maximal key run of the line.
fn has_assignment(line: &str) -> bool {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !is_key_byte(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_key_byte(bytes[i]) {
            i += 1;
        }
        let key = line[start..i].to_ascii_lowercase();
        if KEY_ENDINGS.iter().any(|e| key.ends_with(e))
            && assigned_value(&line[i..]).is_some_and(is_credential_value)
        {
            return true;
        }
    }
    false
}

/// The value assigned right after a key, in either accepted form.
fn assigned_value(after_key: &str) -> Option<&str> {
    if let Some(rest) = after_key.strip_prefix('=') {
        let end = rest
            .find(|c: char| {
                crate::text::is_ws(c) || matches!(c, '"' | '\'' | '`' | '&' | ';' | ',')
            })
            .unwrap_or(rest.len());
        if end > 0 {
            return Some(&rest[..end]);
        }
    }
    let rest = after_key.strip_prefix(['"', '\'']).unwrap_or(after_key);
    let rest = rest.trim_start_matches([' ', '\t']);
    let rest = rest.strip_prefix(['=', ':'])?;
    let rest = rest.trim_start_matches([' ', '\t']);
    let quote = rest.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let value = &rest[1..];
    value.find(quote).map(|end| &value[..end])
}

fn is_credential_value(v: &str) -> bool {
    v.chars().count() >= 16
        && !crate::text::has_ws(v)
        && v.bytes().any(|b| b.is_ascii_alphabetic())
        && v.bytes().any(|b| b.is_ascii_digit())
        && !v.starts_with(['$', '<', '{', '%'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(line: &str) -> Option<&'static str> {
        scan(&[line]).hits.first().map(|s| s.kind)
    }

    #[test]
    fn flagged_examples() {
        assert_eq!(kind("DB_PASSWORD=Tr0ub4dor3horsebattery"), Some(ASSIGNMENT));
        assert_eq!(
            kind(r#""api_key": "a1b2c3d4e5f6g7h8i9j0""#),
            Some(ASSIGNMENT)
        );
        assert_eq!(
            kind("https://x/cb?token=abcdefgh12345678&x=1"),
            Some(ASSIGNMENT)
        );
        assert_eq!(
            kind("key AKIAABCDEFGHIJKLMNOP here"),
            Some("AWS access key id")
        );
        assert_eq!(
            kind(&format!("ghp_{}", "a1".repeat(18))),
            Some("GitHub token")
        );
        assert_eq!(kind("glpat-abcdefghij0123456789"), Some("GitLab token"));
        assert_eq!(kind("xoxb-1234567890-abc"), Some("Slack token"));
        assert_eq!(kind("sk-abc123def456ghi789jkl"), Some("sk- API key"));
    }

    #[test]
    fn not_flagged_examples() {
        for line in [
            "password = settings.db_password_2024",
            "token=${GITHUB_TOKEN}",
            "HANDOFF_TARGET_TOKENS=4000",
            "password: <redacted>",
            "token: 4000",
            "sk-learn-pipeline-configuration",
        ] {
            assert_eq!(kind(line), None, "{line}");
        }
    }

    #[test]
    fn key_block_is_blanked_to_its_end() {
        let lines = [
            "a",
            "-----BEGIN RSA PRIVATE KEY-----",
            "MIIE",
            "-----END RSA PRIVATE KEY-----",
            "b",
        ];
        let s = scan(&lines);
        assert_eq!(
            s.hits,
            vec![Secret {
                line: 2,
                kind: "private key block"
            }]
        );
        assert_eq!(s.blank, vec![false, true, true, true, false]);
    }
}
