//! Times as the store prints them (docs/store.md §0): epoch seconds, `gap`, `days-ago`, ISO 8601.

use std::time::SystemTime;

/// Now, in epoch seconds.
pub(crate) fn now() -> i64 {
    epoch(SystemTime::now())
}

/// `gap(s)` of docs/store.md §0: `45 seconds`, `1 minute`, `3 hours`, `2 days`.
pub(crate) fn gap(s: u64) -> String {
    let (n, unit) = if s < 90 {
        (s, "second")
    } else if s < 5400 {
        (s / 60, "minute")
    } else if s < 172_800 {
        (s / 3600, "hour")
    } else {
        (s / 86_400, "day")
    };
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

/// `ago` of docs/store.md §0: how long since `mtime`, for people (`3 hours ago`).
pub(crate) fn ago(mtime: Option<i64>, now: i64) -> String {
    match mtime {
        Some(m) => format!("{} ago", gap((now - m).max(0) as u64)),
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

/// Seconds since the epoch of an RFC 3339 time (`2026-12-07T00:15:32.912Z`), as transcripts
/// write them.
pub(crate) fn parse_iso(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp())
}

/// Seconds since the epoch of a file time (negative before 1970).
pub(crate) fn epoch(t: SystemTime) -> i64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

#[cfg(test)]
mod tests {
    use super::{ago, gap};

    #[test]
    fn durations_read_as_english() {
        let said: Vec<String> = [0, 1, 89, 90, 119, 5399, 5400, 7199, 172_799, 172_800]
            .into_iter()
            .map(gap)
            .collect();
        assert_eq!(
            said,
            [
                "0 seconds",
                "1 second",
                "89 seconds",
                "1 minute",
                "1 minute",
                "89 minutes",
                "1 hour",
                "1 hour",
                "47 hours",
                "2 days"
            ]
        );
        assert_eq!(ago(Some(100), 100 + 3 * 3600), "3 hours ago");
        assert_eq!(
            ago(Some(200), 100),
            "0 seconds ago",
            "a future mtime is now"
        );
    }
}
