//! What the background writer costs (docs/agents.md): one line per writer run — when, how long
//! it took, and the tokens and money its client reported (where it reports them; which do is
//! in docs/agents.md). Kept in `<store>/.writer-costs` for 30 days, rewritten whole under a lock (temp,
//! fsync, rename), so `status` can show the last run and the last seven days.

use serde::{Deserialize, Serialize};

use super::Store;
use super::slot;

const FILE: &str = ".writer-costs";
/// How long a line is kept.
const KEEP_SECONDS: i64 = 30 * 86_400;
/// The ledger read at most, its newest lines (a line is ~250 bytes; 30 days of runs fit many
/// times over).
const CAP: u64 = 4 * 1024 * 1024;

/// Tokens and money one writer run's client reported; `None` where it reported nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Usage {
    pub(crate) input_tokens: Option<u64>,
    pub(crate) output_tokens: Option<u64>,
    pub(crate) cost_usd: Option<f64>,
}

impl Usage {
    /// Both together (a retry's run adds to the first).
    pub(crate) fn add(self, other: Usage) -> Usage {
        let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
        };
        Usage {
            input_tokens: sum(self.input_tokens, other.input_tokens),
            output_tokens: sum(self.output_tokens, other.output_tokens),
            cost_usd: match (self.cost_usd, other.cost_usd) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)).filter(|d| d.is_finite()),
            },
        }
    }
}

/// One writer run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Cost {
    /// When it ended (seconds since the epoch).
    pub(crate) at: i64,
    /// Wall time, all attempts together.
    pub(crate) seconds: u64,
    /// The writer program's name (`claude`, …).
    pub(crate) writer: String,
    pub(crate) checkout: String,
    /// The run's outcome word at the writer's exit (`promoted`, `held`, `refused`, `failed`,
    /// …); a held one may be promoted after, which its run says.
    pub(crate) outcome: String,
    /// The run's id (its folder under `.runs/`), so a reader can ask the run for its state now.
    #[serde(default)]
    pub(crate) run: Option<String>,
    #[serde(flatten)]
    pub(crate) usage: Usage,
}

/// Add `cost` to the ledger, dropping lines older than 30 days. Best effort: a writer run is
/// never failed by its bookkeeping.
pub(crate) fn record(store: &Store, cost: &Cost) {
    let Ok(_lock) = slot::lock(
        store,
        FILE.trim_start_matches('.'),
        std::time::Duration::from_secs(5),
    ) else {
        return;
    };
    let mut kept: Vec<Cost> = read(store)
        .into_iter()
        .filter(|c| c.at >= cost.at - KEEP_SECONDS)
        .collect();
    kept.push(cost.clone());
    let text: String = kept
        .iter()
        .filter_map(|c| serde_json::to_string(c).ok())
        .map(|l| l + "\n")
        .collect();
    let _ = slot::replace(&store.dir.join(FILE), text.as_bytes(), None, None);
}

/// Every run in the ledger's newest [`CAP`] bytes, oldest first: lines that do not parse are
/// skipped, a cost no client reports (negative, not finite) is read as none. A FIFO or a link
/// planted at its place reads as empty, never blocks.
pub(crate) fn read(store: &Store) -> Vec<Cost> {
    let Some(bytes) = crate::fs::read_regular_tail(&store.dir.join(FILE), CAP) else {
        return Vec::new();
    };
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str::<Cost>(l).ok())
        .map(|mut c| {
            c.usage.cost_usd = c.usage.cost_usd.filter(|d| d.is_finite() && *d >= 0.0);
            c
        })
        .collect()
}

/// The runs since `since` summed: how many, their wall time, and their usage.
pub(crate) fn total(costs: &[Cost], since: i64) -> (usize, u64, Usage) {
    costs
        .iter()
        .filter(|c| c.at >= since)
        .fold((0, 0, Usage::default()), |(n, secs, usage), c| {
            (n + 1, secs.saturating_add(c.seconds), usage.add(c.usage))
        })
}
