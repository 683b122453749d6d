//! Size (docs/gate.md §2.8): bytes → tokens → turns, against thresholds that come from built-in
//! defaults, the environment, or a KEY=VALUE file. The file is parsed as text and never
//! executed: sourcing it used to run arbitrary code.

use crate::finding::Severity;
use crate::finding::{Code, Finding, Phase};

/// The four threshold keys in table order, with their defaults.
pub(crate) const KEYS: [(&str, u64); 4] = [
    ("CTX_CHARS_PER_TOKEN_X100", 268),
    ("CTX_GROWTH_TOKENS_PER_TURN", 2070),
    ("HANDOFF_TARGET_TOKENS", 4000),
    ("HANDOFF_CEILING_TOKENS", 8000),
];

const FILE_CAP: u64 = 64 * 1024;

/// The computed size and the findings it produced (threshold warnings, then at most one size
/// warning).
#[derive(Debug, Clone)]
pub(crate) struct Size {
    pub(crate) bytes: u64,
    pub(crate) tokens: u64,
    pub(crate) tenths: u64,
    pub(crate) chars_per_token_x100: u64,
    pub(crate) growth: u64,
    pub(crate) target: u64,
    pub(crate) ceiling: u64,
    pub(crate) over: Option<&'static str>,
    pub(crate) findings: Vec<Finding>,
}

impl Size {
    /// `0.1`-style turns.
    pub(crate) fn turns(&self) -> String {
        format!("{}.{}", self.tenths / 10, self.tenths % 10)
    }

    /// The compat size line (without its trailing newline).
    pub(crate) fn line(&self) -> String {
        format!(
            "size     {} chars ≈ {} tokens ≈ {} turns of work",
            self.bytes,
            self.tokens,
            self.turns()
        )
    }
}

fn parse_value(v: &str) -> Option<u64> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok().filter(|&n| n >= 1)
}

/// Parse a thresholds file's text: the last assignment of each key wins.
pub(crate) fn parse_file(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for raw in text.lines() {
        let mut line = crate::text::trim(raw);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(rest) = line.strip_prefix("export")
            && rest.starts_with(crate::text::is_ws)
        {
            line = rest.trim_start_matches(crate::text::is_ws);
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let valid_key = key
            .bytes()
            .enumerate()
            .all(|(i, b)| b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit()));
        if key.is_empty() || !valid_key {
            continue;
        }
        let value = match value.chars().next() {
            Some(q @ ('"' | '\'')) => {
                let inner = &value[1..];
                inner.find(q).map_or(inner, |end| &inner[..end])
            }
            _ => value.split(crate::text::is_ws).next().unwrap_or(""),
        };
        out.retain(|(k, _)| k != key);
        out.push((key.to_string(), value.to_string()));
    }
    out
}

fn warn(code: Code, text: String, subject: Option<String>) -> Finding {
    Finding::new(Severity::Warn, code, text, None, subject)
}

/// Effective thresholds from the process environment, with their warnings.
fn thresholds() -> ([u64; 4], Vec<Finding>) {
    let mut findings = Vec::new();
    let mut from_file: Vec<(String, String)> = Vec::new();
    let mut file_name = String::new();
    if let Some(path) = std::env::var_os("CTX_THRESHOLDS_FILE").filter(|p| !p.is_empty()) {
        let p = std::path::PathBuf::from(&path);
        file_name = p.to_string_lossy().into_owned();
        let text = crate::fs::metadata(&p)
            .ok()
            .filter(|m| !m.is_dir())
            .and_then(|_| crate::fs::File::open(&p).ok())
            .and_then(|f| {
                use std::io::Read;
                let mut buf = Vec::new();
                f.take(FILE_CAP).read_to_end(&mut buf).ok().map(|_| buf)
            });
        match text {
            Some(bytes) => from_file = parse_file(&String::from_utf8_lossy(&bytes)),
            None => findings.push(warn(
                Code::ThresholdsFileMissing,
                format!("no thresholds file at {file_name} — using built-in thresholds"),
                None,
            )),
        }
    }
    let mut values = [0; 4];
    for (slot, (key, default)) in values.iter_mut().zip(KEYS) {
        let mut chosen = None;
        if let Some((_, v)) = from_file.iter().find(|(k, _)| k == key) {
            chosen = parse_value(v);
            if chosen.is_none() {
                findings.push(invalid(key, v, &file_name));
            }
        }
        if let Ok(v) = std::env::var(key)
            && !v.is_empty()
        {
            let parsed = parse_value(&v);
            if parsed.is_none() {
                findings.push(invalid(key, &v, "the environment"));
            }
            chosen = chosen.or(parsed);
        }
        *slot = chosen.unwrap_or(default);
    }
    (values, findings)
}

fn invalid(key: &str, value: &str, source: &str) -> Finding {
    warn(
        Code::ThresholdInvalid,
        format!("ignoring {key}={value} from {source}: not a positive whole number"),
        Some(key.to_string()),
    )
}

/// Measure a document of `bytes` bytes (CR-free, trailing newlines removed).
pub(crate) fn measure(bytes: usize) -> Size {
    let ([cpt, growth, target, ceiling], mut findings) = thresholds();
    let bytes = bytes as u64;
    let tokens = bytes.saturating_mul(100) / cpt;
    let tenths = tokens.saturating_mul(10) / growth;
    let over = if tokens > ceiling {
        findings.push(
            warn(
                Code::SizeOverCeiling,
                format!(
                    "over the ceiling of {ceiling} tokens by {} — cut Pointers, never a decision, and say in the handoff why it had to be this long",
                    tokens - ceiling
                ),
                None,
            )
            .in_phase(Phase::AfterSize),
        );
        Some("ceiling")
    } else if tokens > target {
        findings.push(
            warn(
                Code::SizeOverTarget,
                format!(
                    "over the target of {target} tokens by {} — cut Pointers, never a decision",
                    tokens - target
                ),
                None,
            )
            .in_phase(Phase::AfterSize),
        );
        Some("target")
    } else {
        None
    };
    Size {
        bytes,
        tokens,
        tenths,
        chars_per_token_x100: cpt,
        growth,
        target,
        ceiling,
        over,
        findings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_is_parsed_never_run() {
        let parsed = parse_file(
            "# c\nexport HANDOFF_TARGET_TOKENS=\"10\"\nX=${X:-600}\nHANDOFF_TARGET_TOKENS=20 # later\n$(rm -rf /)=1\n",
        );
        assert!(parsed.contains(&("HANDOFF_TARGET_TOKENS".into(), "20".into())));
        assert!(!parsed.iter().any(|(k, _)| k.contains('$')));
        assert_eq!(parse_value("0"), None);
        assert_eq!(parse_value("-3"), None);
        assert_eq!(parse_value("12"), Some(12));
    }
}
