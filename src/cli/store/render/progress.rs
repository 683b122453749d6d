//! `set-progress` for people.

use super::super::progress::ProgressSet;

pub(crate) fn progress_set(p: &ProgressSet) -> String {
    if p.no_field {
        return format!(
            "unchanged {} (no progress: or status: line in the first 20 lines)\n",
            p.path
        );
    }
    format!(
        "progress {}: {} -> {}\n",
        p.path,
        p.old.as_deref().unwrap_or("(absent)"),
        p.new
    )
}
