//! Times as the store prints them (docs/store.md §0): epoch seconds, `gap`, `days-ago`, ISO 8601.

use std::time::SystemTime;

/// Now, in epoch seconds.
pub(crate) fn now() -> i64 {
    epoch(SystemTime::now())
}

/// `gap(s)` of docs/store.md §0.
pub(crate) fn gap(s: u64) -> String {
    if s < 90 {
        format!("{s} second(s)")
    } else if s < 5400 {
        format!("{} minute(s)", s / 60)
    } else if s < 172_800 {
        format!("{} hour(s)", s / 3600)
    } else {
        format!("{} day(s)", s / 86_400)
    }
}

/// `days-ago` of docs/store.md §0.
pub(crate) fn days_ago(mtime: Option<i64>, now: i64) -> String {
    match mtime {
        Some(m) => format!("{} day(s) ago", (now - m).max(0) / 86_400),
        None => "at an unknown time (mtime unreadable)".into(),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` in UTC.
pub(crate) fn iso(epoch: i64) -> String {
    // RFC 3339 at whole seconds with `Z` is this exact shape, without parsing a format string
    // for every line of a 10,000-entry `list`.
    chrono::DateTime::from_timestamp(epoch, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// Seconds since the epoch of a file time (negative before 1970).
pub(crate) fn epoch(t: SystemTime) -> i64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}
