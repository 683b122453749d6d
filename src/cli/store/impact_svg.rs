//! `impact --svg FILE`: the distribution of tool calls before the first edit, one bar series per
//! arm — a picture to paste into a discussion. Written by hand: a plotting crate (plotters) needs
//! a font backend to lay out its labels (system fonts through font-kit, or a TTF of our own),
//! which is more than one bar chart of fixed-size text is worth; SVG's own `<text>` needs none.

use std::fmt::Write;

use crate::ops::impact::Measured;
use crate::store::resets::Arm;

const W: f64 = 760.0;
const H: f64 = 420.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;
/// Calls past this many share the last bar (`30+`).
const LAST: usize = 30;

/// One arm's series: its colour and each reset's tool calls before its first edit.
type Series = (Arm, &'static str, Vec<usize>);

/// The arms that have a reset followed by an edit.
fn series(resets: &[Measured]) -> Vec<Series> {
    [
        (Arm::Delivered, "#1f77b4"),
        (Arm::Holdout, "#ff7f0e"),
        (Arm::None, "#8c8c8c"),
    ]
    .into_iter()
    .filter_map(|(arm, colour)| {
        let calls: Vec<usize> = resets
            .iter()
            .filter(|m| m.arm == arm)
            .filter_map(|m| m.to_first_edit.map(|e| (e.tool_calls as usize).min(LAST)))
            .collect();
        (!calls.is_empty()).then_some((arm, colour, calls))
    })
    .collect()
}

/// The chart of `resets` as an SVG document.
pub(crate) fn chart(resets: &[Measured]) -> String {
    let arms = series(resets);
    let bins = arms
        .iter()
        .flat_map(|(_, _, c)| c.iter().copied())
        .max()
        .unwrap_or(0)
        + 1;
    let counts: Vec<Vec<usize>> = arms
        .iter()
        .map(|(_, _, calls)| {
            let mut n = vec![0; bins];
            calls.iter().for_each(|c| n[*c] += 1);
            n
        })
        .collect();
    let top = counts.iter().flatten().copied().max().unwrap_or(0).max(1);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let bin_w = pw / bins as f64;
    let bar_w = bin_w * 0.8 / arms.len().max(1) as f64;
    let y = |n: usize| TOP + ph - ph * n as f64 / top as f64;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{W}\" height=\"{H}\" fill=\"white\"/>\n<text x=\"{LEFT}\" y=\"28\" font-size=\"15\">Tool calls before the first edit after a reset, per arm</text>\n"
    );
    for (i, (_, colour, _)) in arms.iter().enumerate() {
        for (b, n) in counts[i].iter().enumerate().filter(|(_, n)| **n > 0) {
            let x = LEFT + b as f64 * bin_w + bin_w * 0.1 + i as f64 * bar_w;
            let _ = writeln!(
                svg,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bar_w:.1}\" height=\"{:.1}\" fill=\"{colour}\"/>",
                y(*n),
                TOP + ph - y(*n)
            );
        }
    }
    axes(&mut svg, bins, top);
    legend(&mut svg, &arms);
    svg.push_str("</svg>\n");
    svg
}

/// The axes, their ticks and their titles, for `bins` bars and `top` resets at most.
fn axes(svg: &mut String, bins: usize, top: usize) {
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let bin_w = pw / bins as f64;
    let y0 = TOP + ph;
    let _ = writeln!(
        svg,
        "<path d=\"M{LEFT} {TOP} V{y0} H{}\" stroke=\"black\" fill=\"none\"/>",
        LEFT + pw
    );
    for b in (0..bins).step_by(bins.div_ceil(15).max(1)) {
        let label = if b == LAST {
            format!("{LAST}+")
        } else {
            b.to_string()
        };
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{label}</text>",
            LEFT + (b as f64 + 0.5) * bin_w,
            y0 + 18.0
        );
    }
    for k in 0..=4 {
        let n = top * k / 4;
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{n}</text>",
            LEFT - 8.0,
            y0 - ph * n as f64 / top as f64 + 4.0
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">tool calls before the first edit</text>\n<text x=\"16\" y=\"{:.1}\" transform=\"rotate(-90 16 {:.1})\" text-anchor=\"middle\">resets</text>",
        LEFT + pw / 2.0,
        H - 16.0,
        TOP + ph / 2.0,
        TOP + ph / 2.0
    );
}

/// A box and a line per arm: its name and how many resets it has.
fn legend(svg: &mut String, arms: &[Series]) {
    for (i, (arm, colour, calls)) in arms.iter().enumerate() {
        let ly = TOP + 10.0 + i as f64 * 22.0;
        let _ = writeln!(
            svg,
            "<rect x=\"{}\" y=\"{ly}\" width=\"14\" height=\"14\" fill=\"{colour}\"/><text x=\"{}\" y=\"{}\">{} (n = {})</text>",
            W - RIGHT + 20.0,
            W - RIGHT + 40.0,
            ly + 12.0,
            arm.word(),
            calls.len()
        );
    }
}
