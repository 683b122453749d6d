//! The figures `impact` reports: per client and arm, medians of what followed a reset; between
//! the delivered arm and the other (the holdout: a randomized comparison; resets given nothing:
//! observational, never a cause), the difference of medians with a 95 % bootstrap interval —
//! 2,000 resamples of each arm with replacement, from a seeded generator (SplitMix64, a few
//! lines: the same seed gives the same interval). Below [`ENOUGH`] resets in an arm there is no
//! figure, only "not enough data".

use serde::Serialize;

use super::{Measured, Transcript};
use crate::store::resets::{Arm, Audit};

/// The fewest resets with a measure an arm needs before a figure is given.
pub(crate) const ENOUGH: usize = 30;
const RESAMPLES: usize = 2_000;

/// One client's arm.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Summary {
    pub(crate) client: String,
    pub(crate) arm: Arm,
    pub(crate) resets: usize,
    /// Resets whose transcript was read.
    pub(crate) read: usize,
    /// Of those, the ones followed by a file edit (the medians are over these).
    pub(crate) with_edit: usize,
    pub(crate) median_tool_calls_to_edit: Option<f64>,
    pub(crate) median_tokens_to_edit: Option<f64>,
    pub(crate) median_minutes_to_edit: Option<f64>,
    /// Calls naming a file the handoff cited, and calls repeating a dead end or trap, in all.
    pub(crate) cited_reads: u64,
    pub(crate) repeats: u64,
    /// Compactions whose summary was audited, and what those summaries kept, summed.
    pub(crate) audited: usize,
    pub(crate) kept: Audit,
}

/// The delivered arm against another, for one client and one measure.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Compared {
    pub(crate) client: String,
    pub(crate) measure: &'static str,
    pub(crate) against: Arm,
    /// Resets given nothing were not drawn at random: not a fair comparison.
    pub(crate) observational: bool,
    /// Resets with the measure in each arm: delivered, the other.
    pub(crate) n: (usize, usize),
    /// The delivered arm's median minus the other's, with its 95 % interval; `None`: not
    /// enough data.
    pub(crate) difference: Option<Interval>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Interval {
    pub(crate) median: f64,
    pub(crate) low: f64,
    pub(crate) high: f64,
}

type Measure = (&'static str, fn(&Measured) -> Option<f64>);

const MEASURES: [Measure; 3] = [
    ("tool_calls_to_first_edit", |m| {
        m.to_first_edit.map(|e| e.tool_calls as f64)
    }),
    ("tokens_to_first_edit", |m| {
        m.to_first_edit.map(|e| e.tokens as f64)
    }),
    ("minutes_to_first_edit", |m| {
        m.to_first_edit.map(|e| e.minutes)
    }),
];

/// The summaries and comparisons of `measured`.
pub(crate) fn report(measured: &[Measured], seed: u64) -> (Vec<Summary>, Vec<Compared>) {
    let mut clients: Vec<&str> = measured.iter().map(|m| m.client.as_str()).collect();
    clients.sort_unstable();
    clients.dedup();
    let mut summaries = Vec::new();
    let mut compared = Vec::new();
    for client in clients {
        let of = |arm: Arm| -> Vec<&Measured> {
            measured
                .iter()
                .filter(|m| m.client == client && m.arm == arm)
                .collect()
        };
        for arm in [Arm::Delivered, Arm::Holdout, Arm::None] {
            let ms = of(arm);
            if !ms.is_empty() {
                summaries.push(summary(client, arm, &ms));
            }
        }
        // A holdout is the fair comparison; without one, resets given nothing, labelled.
        let against = if of(Arm::Holdout).is_empty() {
            Arm::None
        } else {
            Arm::Holdout
        };
        let (ours, theirs) = (of(Arm::Delivered), of(against));
        if ours.is_empty() || theirs.is_empty() {
            continue;
        }
        for (name, get) in MEASURES {
            let a: Vec<f64> = ours.iter().filter_map(|m| get(m)).collect();
            let b: Vec<f64> = theirs.iter().filter_map(|m| get(m)).collect();
            compared.push(Compared {
                client: client.to_string(),
                measure: name,
                against,
                observational: against == Arm::None,
                n: (a.len(), b.len()),
                difference: (a.len() >= ENOUGH && b.len() >= ENOUGH)
                    .then(|| bootstrap(&a, &b, seed)),
            });
        }
    }
    (summaries, compared)
}

fn summary(client: &str, arm: Arm, ms: &[&Measured]) -> Summary {
    let read: Vec<&&Measured> = ms
        .iter()
        .filter(|m| m.transcript == Transcript::Read)
        .collect();
    let median_of = |get: fn(&Measured) -> Option<f64>| {
        let mut v: Vec<f64> = read.iter().filter_map(|m| get(m)).collect();
        median(&mut v)
    };
    Summary {
        client: client.to_string(),
        arm,
        resets: ms.len(),
        read: read.len(),
        with_edit: read.iter().filter(|m| m.to_first_edit.is_some()).count(),
        median_tool_calls_to_edit: median_of(MEASURES[0].1),
        median_tokens_to_edit: median_of(MEASURES[1].1),
        median_minutes_to_edit: median_of(MEASURES[2].1),
        cited_reads: read.iter().map(|m| m.cited_reads).sum(),
        repeats: read.iter().map(|m| m.repeats).sum(),
        audited: ms.iter().filter(|m| m.audit.is_some()).count(),
        kept: ms
            .iter()
            .filter_map(|m| m.audit.as_ref())
            .fold(Audit::default(), add),
    }
}

/// Two audits' counts summed (their dropped items left out).
fn add(mut sum: Audit, a: &Audit) -> Audit {
    for (s, c) in [
        (&mut sum.decisions, a.decisions),
        (&mut sum.dead_ends, a.dead_ends),
        (&mut sum.traps, a.traps),
        (&mut sum.next, a.next),
        (&mut sum.paths, a.paths),
    ] {
        s.kept += c.kept;
        s.of += c.of;
    }
    sum
}

/// The median of `v` (sorted in place); `None` when empty.
pub(crate) fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The difference of medians `a − b` and its 95 % percentile bootstrap interval.
fn bootstrap(a: &[f64], b: &[f64], seed: u64) -> Interval {
    let mut rng = SplitMix64(seed);
    let mut diffs = Vec::with_capacity(RESAMPLES);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    for _ in 0..RESAMPLES {
        for x in ra.iter_mut() {
            *x = a[rng.below(a.len())];
        }
        for x in rb.iter_mut() {
            *x = b[rng.below(b.len())];
        }
        if let (Some(ma), Some(mb)) = (median(&mut ra), median(&mut rb)) {
            diffs.push(ma - mb);
        }
    }
    diffs.sort_by(f64::total_cmp);
    let at = |q: f64| diffs[((diffs.len() - 1) as f64 * q).round() as usize];
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    Interval {
        median: median(&mut a).unwrap_or(0.0) - median(&mut b).unwrap_or(0.0),
        low: at(0.025),
        high: at(0.975),
    }
}

/// SplitMix64 (Steele, Lea and Flood 2014): enough for resampling, reproducible from its seed.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_and_a_seeded_interval() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
        let a: Vec<f64> = (0..40).map(|i| (i % 7) as f64).collect();
        let b: Vec<f64> = (0..40).map(|i| (i % 7 + 3) as f64).collect();
        let one = bootstrap(&a, &b, 7);
        assert_eq!(
            one,
            bootstrap(&a, &b, 7),
            "the same seed, the same interval"
        );
        assert_eq!(one.median, -3.0);
        assert!(one.low <= one.median && one.median <= one.high, "{one:?}");
        assert!(one.high < 0.0, "a shift of 3 in 40 each is clear: {one:?}");
    }
}
