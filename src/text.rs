//! Small text predicates the contract defines once and every module shares: the exact
//! whitespace set (VT included, NBSP excluded), trimming with it, and the path-shaped test.

/// The contract's whitespace: space, tab, LF, VT, FF, CR. `char::is_ascii_whitespace`
/// leaves out VT, so it must not be used.
pub(crate) fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0B' | '\x0C' | '\r')
}

/// Trim the contract's whitespace from both ends.
pub fn trim(s: &str) -> &str {
    s.trim_matches(is_ws)
}

/// Whether `s` contains any of the contract's whitespace.
pub(crate) fn has_ws(s: &str) -> bool {
    s.contains(is_ws)
}

/// Split on runs of the contract's whitespace, dropping empty words.
pub(crate) fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(is_ws).filter(|w| !w.is_empty())
}

/// Path-shaped: contains `/`, or ends in `.` plus 1–10 ASCII letters or digits.
pub(crate) fn is_path_shaped(s: &str) -> bool {
    let ext = s
        .bytes()
        .rev()
        .take_while(u8::is_ascii_alphanumeric)
        .count();
    let dot = s.len().checked_sub(ext + 1);
    s.contains('/') || ((1..=10).contains(&ext) && dot.is_some_and(|d| s.as_bytes()[d] == b'.'))
}

/// An identifier: `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// 1-based line number of byte offset `at` in `bytes`.
pub(crate) fn line_of_offset(bytes: &[u8], at: usize) -> usize {
    memchr::memchr_iter(b'\n', &bytes[..at.min(bytes.len())]).count() + 1
}

/// Lowercase hex MD5 of `bytes` (slot names, safe session ids, marker names).
pub(crate) fn hex_md5(bytes: &[u8]) -> String {
    use md5::Digest;
    hex(&md5::Md5::digest(bytes))
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first character of `text` a reader does not see: a control character other than newline
/// and tab (C0, DEL or C1: a terminal takes it as a command — ESC, CSI, OSC), or one that is invisible where it is shown yet read by a model — a
/// bidirectional override or isolate, a zero-width character, a byte order mark, a line or
/// paragraph separator, a tag character (U+E0000–E007F, which spell hidden ASCII) or a
/// variation selector of the supplement (U+E0100–E01EF, which smuggle bytes after a letter).
/// One byte scan when there is none of their lead bytes.
pub(crate) fn first_unseen(text: &str) -> Option<char> {
    // Lead bytes: C0, DEL, C1 (0xC2), U+061C (0xD8), U+180E (0xE1), U+200B–206F (0xE2),
    // U+FEFF (0xEF), planes 14 (0xF3).
    let maybe = |b: u8| {
        (b < 0x20 && b != b'\n' && b != b'\t')
            || matches!(b, 0x7f | 0xc2 | 0xd8 | 0xe1 | 0xe2 | 0xef | 0xf3)
    };
    if !text.bytes().any(maybe) {
        return None;
    }
    text.chars().find(|&c| is_control(c) || is_invisible(c))
}

fn is_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// Format characters that change or hide what a person sees (Unicode's `Cf`, `Zl`, `Zp` that
/// carry no visible mark), and the tag and variation-selector-supplement blocks.
fn is_invisible(c: char) -> bool {
    matches!(c as u32,
        0x061C                  // Arabic letter mark
        | 0x180E                // Mongolian vowel separator
        | 0x200B..=0x200F       // zero-width space, non-joiner, joiner; LRM, RLM
        | 0x2028..=0x202E       // line and paragraph separators; bidi embeddings, overrides
        | 0x2060..=0x2064       // word joiner, invisible operators
        | 0x2066..=0x2069       // bidi isolates
        | 0xFEFF                // byte order mark, zero-width no-break space
        | 0xE0000..=0xE007F     // tags
        | 0xE0100..=0xE01EF) // variation selectors supplement
}

/// `text` with every character a reader does not see ([`first_unseen`]) shown as an escape
/// (`\x1B`, `\u{9B}`, `\u{202E}`): what reaches a person's terminal never acts on it and
/// hides nothing, whatever a handoff, a remote's `meta` or a path held. Borrowed when there
/// is none.
pub(crate) fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, |c| is_control(c) || is_invisible(c))
}

/// `text` with only its invisible characters escaped, control characters kept: for a model,
/// whose JSON carries a tab or a CR as the bytes they are, but must not carry what a person
/// reviewing the same text would not see.
pub(crate) fn unhidden(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, is_invisible)
}

/// Serialised JSON with every invisible character (inside its strings: JSON has no other
/// place for one) written as its `\uXXXX` escape (a surrogate pair beyond U+FFFF): the same
/// value, nothing hidden in the bytes.
pub(crate) fn json_unhidden(json: &str) -> std::borrow::Cow<'_, str> {
    if !json.chars().any(is_invisible) {
        return std::borrow::Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_invisible(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

fn escaped(text: &str, escape: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    if first_unseen(text).is_none_or(|_| !text.chars().any(&escape)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if !escape(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02X}", c as u32)),
            c => out.push_str(&format!("\\u{{{:X}}}", c as u32)),
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_shaped_examples_from_the_contract() {
        for yes in ["app/Mail/", "main.c", "README.md", "v1.2", "Foo.bar"] {
            assert!(is_path_shaped(yes), "{yes}");
        }
        for no in [
            "StartWorkOnIssueAction",
            "App\\Events",
            "10",
            "localhost",
            "Makefile",
        ] {
            assert!(!is_path_shaped(no), "{no}");
        }
    }

    #[test]
    fn identifiers() {
        for yes in ["build", "_x", "L42", "a_1"] {
            assert!(is_identifier(yes), "{yes}");
        }
        for no in ["", "1a", "a-b", "a:b", "é"] {
            assert!(!is_identifier(no), "{no}");
        }
    }

    #[test]
    fn vertical_tab_is_whitespace_but_nbsp_is_not() {
        assert_eq!(trim("\x0Bx\x0C"), "x");
        assert_eq!(trim("\u{a0}x"), "\u{a0}x");
    }
}
