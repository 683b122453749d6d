//! The `progress: writing` placeholder: the document `write --placeholder` stores while a writer
//! authors the real handoff (docs/store.md §9.3; it passes the gate as it stands), and what one
//! found in a slot means now (docs/hooks.md §2.4): active, slow (its writer's transcript still
//! moves) or abandoned. Background writes of compactions are tracked in `runs.rs` instead.

use std::path::PathBuf;
use std::time::SystemTime;

use super::HandoffInfo;
use super::naming::is_safe_id;
use super::time::epoch;

/// What a placeholder (`progress: writing`) means right now (docs/hooks.md §2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlaceholderState {
    /// Young enough, or its age is unknown.
    Active,
    /// Past its budget, but its writer's transcript is still advancing.
    Slow,
    Abandoned,
}

/// The placeholder's state; `transcript` is its writer's transcript and mtime, when the agent's
/// adapter found one (the store knows no agent's file layout).
pub(crate) fn placeholder_state(
    info: &HandoffInfo,
    now: i64,
    transcript: Option<(PathBuf, SystemTime)>,
) -> (PlaceholderState, Option<(PathBuf, SystemTime)>) {
    let timeout = crate::env::settings().fork_timeout;
    let window = crate::env::settings().liveness_window;
    let state = match info.mtime {
        None => PlaceholderState::Active,
        Some(m) if (now - m).max(0) as u64 <= timeout => PlaceholderState::Active,
        Some(_) => {
            let fresh = transcript
                .as_ref()
                .is_some_and(|(_, t)| (now - epoch(*t)).max(0) as u64 <= window);
            if fresh {
                PlaceholderState::Slow
            } else {
                PlaceholderState::Abandoned
            }
        }
    };
    (state, transcript)
}

/// The placeholder text for `reference` in `checkout` at `head`, with writer timeout `timeout`.
pub(crate) fn document(
    reference: &str,
    checkout: &str,
    head: &str,
    session: Option<&str>,
    timeout: u64,
) -> String {
    let session = session
        .filter(|s| is_safe_id(s))
        .map(|s| format!("write_session: {s}\n"))
        .unwrap_or_default();
    format!(
        "# Handoff — (placeholder: a fresh write is in progress)
branch: {reference}
checkout: {checkout}
status: placeholder -- not yet authored
progress: writing
head: {head}
{session}
## Do not re-derive

### Decisions
None.

### Dead ends
None.

### Traps
- This file is a placeholder, written just before a background writer started on the real handoff. It records nothing about the task; see Next.

## Next
1. Wait until the progress line above says complete (handoff-store read --wait {timeout} does this). If it still says writing more than {timeout} seconds after this file was last modified, the writer was abandoned: write a new handoff yourself.

## Pointers

```
```
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Document;
    use crate::store::naming::is_safe_id;

    #[test]
    fn the_placeholder_passes_the_gate_with_no_citations_to_check() {
        // This crate's own checkout serves as a real work tree.
        let checkout = env!("CARGO_MANIFEST_DIR");
        let text = document("main", checkout, &"a".repeat(40), Some("abc-123"), 600);
        let report = crate::report::run_gate::document(
            &Document::parse(&text),
            "placeholder.md",
            Some(checkout),
        );
        assert_eq!(report.exit_code, 0, "{:?}", report.text_lines());
        let lines: Vec<String> = report.text_lines().into_iter().map(|(_, l)| l).collect();
        assert!(
            lines.contains(&"no citations to check (Pointers is empty)".to_string()),
            "{lines:?}"
        );
        assert!(text.contains("write_session: abc-123\n"));
        assert!(!document("m", "/x", "h", Some("../evil"), 600).contains("write_session"));
        assert!(is_safe_id("a") && is_safe_id(&"a".repeat(128)) && is_safe_id("A1._-z"));
        assert!(
            !is_safe_id("")
                && !is_safe_id(&"a".repeat(129))
                && !is_safe_id(".a")
                && !is_safe_id("a b")
        );
    }
}
