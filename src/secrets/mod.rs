//! Credential detection (docs/gate.md §2.5). A handoff is injected into model context and stored in
//! plain files, so a credential is a contract violation. The matched text is never kept: the
//! scan returns line numbers and kinds only, and the document model blanks the flagged lines.

use std::sync::LazyLock;

use regex::Regex;

/// One flagged line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// 1-based line number.
    pub(crate) line: usize,
    pub(crate) kind: &'static str,
}

/// The scan: the hits and which lines later steps must treat as empty.
#[derive(Debug, Clone, Default)]
pub struct SecretScan {
    pub hits: Vec<Secret>,
    pub(crate) blank: Vec<bool>,
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap()
}

static KEY_BEGIN: LazyLock<Regex> =
    LazyLock::new(|| re(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"));
static KEY_END: LazyLock<Regex> =
    LazyLock::new(|| re(r"-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"));
mod rules;

use rules::TOKEN_RULES;

/// Every rule's triggers in one automaton: one pass over a line finds which rules may match.
static TRIGGERS: LazyLock<(aho_corasick::AhoCorasick, Vec<usize>)> = LazyLock::new(|| {
    let mut patterns = Vec::new();
    let mut rule_of = Vec::new();
    for (i, rule) in TOKEN_RULES.iter().enumerate() {
        for t in rule.triggers {
            patterns.push(*t);
            rule_of.push(i);
        }
    }
    let ac = aho_corasick::AhoCorasick::new(patterns)
        .unwrap_or_else(|_| unreachable!("the triggers are a fixed, small set of literals"));
    (ac, rule_of)
});

/// The first token rule (in table order) whose regex matches `line`, its triggers found first.
fn token_kind(line: &str) -> Option<&'static str> {
    let (ac, rule_of) = &*TRIGGERS;
    let mut candidates: u128 = 0;
    for m in ac.find_overlapping_iter(line) {
        candidates |= 1 << rule_of[m.pattern().as_usize()];
    }
    while candidates != 0 {
        let i = candidates.trailing_zeros() as usize;
        candidates &= candidates - 1;
        if TOKEN_RULES[i].is_match(line) {
            return Some(TOKEN_RULES[i].kind);
        }
    }
    None
}

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
    if let Some(kind) = token_kind(line) {
        return Some(kind);
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

const KEY_ENDINGS: [&str; 16] = [
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "api-key",
    "access_key",
    "secret_key",
    "private_key",
    "private_key_id",
    "accountkey",
    "client_secret",
    "auth_token",
    "passphrase",
];

/// Keys whose value is a password: a person's, short as `hunter2`, still one.
const PASSWORD_ENDINGS: [&str; 4] = ["password", "passwd", "pwd", "passphrase"];

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
        let key = &bytes[start..i];
        if !KEY_ENDINGS.iter().any(|e| ends_with_ignore_case(key, e)) {
            continue;
        }
        let password = PASSWORD_ENDINGS
            .iter()
            .any(|e| ends_with_ignore_case(key, e));
        if assigned_value(&line[i..]).is_some_and(|v| is_credential_value(v, password)) {
            return true;
        }
    }
    false
}

/// Whether `key` ends with `ending` (lower case), ignoring ASCII case; no allocation, as this
/// runs on every word of every line.
fn ends_with_ignore_case(key: &[u8], ending: &str) -> bool {
    key.len() >= ending.len()
        && key[key.len() - ending.len()..].eq_ignore_ascii_case(ending.as_bytes())
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
            return (!is_code(&rest[..end])).then_some(&rest[..end]);
        }
    }
    let rest = after_key.strip_prefix(['"', '\'']).unwrap_or(after_key);
    let rest = rest.trim_start_matches([' ', '\t']);
    let rest = rest.strip_prefix(['=', ':'])?;
    let rest = rest.trim_start_matches([' ', '\t']);
    match rest.chars().next()? {
        quote @ ('"' | '\'') => {
            let value = &rest[1..];
            value.find(quote).map(|end| &value[..end])
        }
        // Unquoted, as in `DB_PASSWORD = value` or YAML's `password: value`: the first word,
        // so prose that goes on after it (`holds DB_PASSWORD = hunter2hunter2 for now.`) is
        // judged on the value alone; a sentence's own words are no credential.
        _ => {
            let value = rest
                .split(|c: char| crate::text::is_ws(c) || matches!(c, ';' | ','))
                .next()
                .unwrap_or("")
                .trim_end_matches(['.', ')', ']', '`']);
            (!value.is_empty() && !is_code(value)).then_some(value)
        }
    }
}

/// An unquoted value that is code, not a credential: a dotted path (`settings.db_password`), a
/// call, an index or lookup (`os.environ["DB_PASSWORD"]`, `params[:password]`), a YAML tag
/// (`!vault`).
fn is_code(v: &str) -> bool {
    if v.contains(['(', '[']) || v.starts_with('!') {
        return true;
    }
    // A dotted path.
    v.contains('.')
        && v.split('.').all(|part| {
            part.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
}

/// Whether `v` is a credential: not a placeholder (`$VAR`, `<…>`, `{…}`, `%…%`, `***`), and
/// either a machine secret (16 or more characters, letters and digits, no space) or, for a
/// password, 6 or more characters that are not all letters (`hunter2`, not `string`).
fn is_credential_value(v: &str, password: bool) -> bool {
    let placeholder = v.starts_with(['$', '<', '{', '%', '*'])
        || v.bytes()
            .all(|b| matches!(b, b'*' | b'x' | b'X' | b'.' | b'-'));
    if placeholder || crate::text::has_ws(v) {
        return false;
    }
    let letters = v.bytes().any(|b| b.is_ascii_alphabetic());
    let digits = v.bytes().any(|b| b.is_ascii_digit());
    let machine = v.chars().count() >= 16 && letters && digits;
    let person = password
        && v.chars().count() >= 6
        && letters
        && v.bytes().any(|b| !b.is_ascii_alphabetic());
    machine || person
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
    fn issue_21_forms_are_flagged() {
        for (line, want) in [
            ("DB_PASSWORD = Tr0ub4dor3horsebattery", ASSIGNMENT),
            ("  password: Tr0ub4dor3horsebattery", ASSIGNMENT),
            (
                "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1",
                ASSIGNMENT,
            ),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1",
                ASSIGNMENT,
            ),
            (
                "connect with postgres://admin:pw@db.internal:5432/app",
                "password in a URL",
            ),
            (
                "key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q here",
                "Google API key",
            ),
            (
                "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "JSON web token",
            ),
            ("STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "Stripe key"),
            ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm token"),
            ("hf_abcdefghijklmnopqrstuvwxyz012345", "Hugging Face token"),
        ] {
            assert_eq!(kind(line), Some(want), "{line}");
        }
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
            "the password: see the team vault, never the repository",
            "DB_PASSWORD = ${DB_PASSWORD}",
            "clone https://github.com/owner/repo.git and https://user:$TOKEN@host/x",
            "postgres://admin:<password>@db/app",
            "Tokens per turn: 2070 on average",
        ] {
            assert_eq!(kind(line), None, "{line}");
        }
    }

    #[test]
    fn every_token_rule_compiles_and_has_a_trigger() {
        for rule in &TOKEN_RULES {
            assert!(Regex::new(rule.pattern).is_ok(), "{}", rule.kind);
            assert!(!rule.triggers.is_empty(), "{}", rule.kind);
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
