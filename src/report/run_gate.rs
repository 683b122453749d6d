//! Running the gate: a handoff's bytes or file → parsed once → the gate's checks → the checkout →
//! the resolver → one `Report`. Both front ends call this — `verify-handoff` and the store's
//! verdict procedure — so the library never calls its own command line.

use std::path::{Path, PathBuf};

use super::{CheckoutInfo, Mode, Report};
use crate::citation;
use crate::document::Document;
use crate::finding::{Finding, Origin, Phase, Severity};
use crate::gate::{
    HeaderCheckout, checkout_error, contract, coverage, display_path, expand_checkout, size,
};
use crate::git;
use crate::input::{self, InputError};
use crate::resolve::{self, Resolver};

/// What the gate finds before it looks at a checkout (steps 1–11: contract, citation grammar,
/// input guard, coverage, size), with the citations it parsed on the way.
struct BeforeCheckout {
    findings: Vec<Finding>,
    citations: Vec<citation::CitationLine>,
    size: size::Size,
}

fn before_checkout(doc: &Document, header_state: &HeaderCheckout) -> BeforeCheckout {
    let mut findings = contract::check(doc, header_state);
    let block = doc.citation_block();
    let citations =
        citation::parse_lines(block.iter().flatten().map(|b| (b.line, b.text.as_str())));
    findings.extend(contract::path_symbols(&citations).into_iter().map(|mut f| {
        f.line = f.line.map(|n| doc.number(n));
        f
    }));
    if let Some(refusal) = resolve::input_guard(&citations) {
        findings.push(refusal.finding());
    }
    findings.extend(coverage::check(
        doc,
        block.is_some().then_some(&citations[..]),
    ));
    let size = size::measure(doc.size_bytes);
    findings.extend(size.findings.iter().cloned());
    BeforeCheckout {
        findings,
        citations,
        size,
    }
}

/// The gate's report on `doc`, a rewrite of the document `before` reported on that changed only
/// the line numbers of its citations (`--fix`): the document's own checks (contract, coverage,
/// size) run on the new text; the checkout and each citation's verdict are `before`'s, except
/// that `moved` gives the verdict of a citation whose line number changed. What a second run
/// would report, without opening the tree again; `None` when a citation `moved` does not
/// account for changed too (a rewritten `path:N` inside another pointer's fragment).
pub(crate) fn after_renumbering(
    before: &Report,
    doc: &Document,
    file: &str,
    moved: impl Fn(&resolve::Entry, &citation::CitationLine) -> Option<resolve::Entry>,
) -> Option<Report> {
    let mut report = Report::new(Mode::Gate, file);
    let header = header_state(doc, file);
    let by_argument = before
        .checkout
        .as_ref()
        .is_some_and(|c| matches!(c.origin, Origin::Argument | Origin::ArgumentOverriding));
    let header = if by_argument && !matches!(header, HeaderCheckout::Usable(_)) {
        HeaderCheckout::Absent
    } else {
        header
    };
    let BeforeCheckout {
        findings,
        citations,
        size,
    } = before_checkout(doc, &header);
    report.findings.extend(findings);
    report.size = Some(size);
    report.findings.extend(
        before
            .findings
            .iter()
            .filter(|f| f.phase == Phase::Checkout)
            .cloned(),
    );
    report.checkout = before.checkout.clone();
    if report.count(Severity::Error) == 0
        && let Some(resolution) = &before.citations
        && resolution.entries.len() == citations.len()
    {
        let mut resolution = resolution.clone();
        for (entry, line) in resolution.entries.iter_mut().zip(&citations) {
            match moved(entry, line) {
                Some(e) => *entry = e,
                None if entry.citation == line.citation => {}
                None => return None,
            }
        }
        report.citations = Some(resolution);
    } else if before.citations.is_some() {
        return None;
    }
    report.finish();
    Some(report)
}

fn header_state(doc: &Document, file: &str) -> HeaderCheckout {
    match doc.field("checkout") {
        None => HeaderCheckout::Absent,
        Some(f) => expand_checkout(&f.value, Path::new(file)),
    }
}

/// The first error that makes `doc` malformed (gate exit 2) without looking at a checkout or a
/// citation's target — what sync checks before it imports a document whose `checkout:` it has
/// just pointed at this checkout.
pub(crate) fn malformed(doc: &Document, file: &str) -> Option<Finding> {
    before_checkout(doc, &header_state(doc, file))
        .findings
        .into_iter()
        .find(|f| f.severity == Severity::Error)
}

/// Gate a parsed document. `file` is FILE as given; `checkout_arg` the CHECKOUT argument.
pub(crate) fn document(doc: &Document, file: &str, checkout_arg: Option<&str>) -> Report {
    let mut report = Report::new(Mode::Gate, file);
    let header = doc.field("checkout");
    let header_state = header_state(doc, file);
    // A CHECKOUT argument replaces the header's checkout: an unusable one is then what `write`
    // would fill in, not a violation (one meaning of valid for both).
    let replaced = checkout_arg.is_some_and(|a| !a.is_empty())
        && !matches!(header_state, HeaderCheckout::Usable(_));
    let BeforeCheckout {
        findings,
        citations,
        size,
    } = before_checkout(
        doc,
        if replaced {
            &HeaderCheckout::Absent
        } else {
            &header_state
        },
    );
    report.findings.extend(findings);
    report.size = Some(size);

    // Checkout (step 12).
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let arg = checkout_arg.filter(|a| !a.is_empty());
    let header_line = header.as_ref().map(|f| doc.number(f.line));
    let (path, path_text, origin, err_line) = match (&arg, &header_state) {
        (Some(a), _) => (PathBuf::from(a), a.to_string(), Origin::Argument, None),
        (None, HeaderCheckout::Usable(p)) => {
            (p.clone(), display_path(p), Origin::Header, header_line)
        }
        (None, HeaderCheckout::Absent | HeaderCheckout::Empty) => {
            (cwd.clone(), display_path(&cwd), Origin::Cwd, None)
        }
        (None, _) => (
            cwd.clone(),
            display_path(&cwd),
            Origin::CwdHeaderNotAbsolute,
            None,
        ),
    };
    let errors_so_far = report.count(Severity::Error);
    let wants_index = errors_so_far == 0 && !citations.is_empty();
    let work_tree = match git::open_work_tree(&path, wants_index) {
        Ok(w) => Some(w),
        Err(e) => {
            report
                .findings
                .push(checkout_error(e, &path_text, err_line));
            None
        }
    };
    if let Some(wt) = &work_tree {
        let (origin, overriding) = match (&arg, &header_state) {
            (Some(_), HeaderCheckout::Usable(h)) if !git::same_work_tree(h, &wt.root) => {
                (Origin::ArgumentOverriding, Some(display_path(h)))
            }
            _ => (origin, None),
        };
        note_checkout(
            &mut report,
            doc,
            wt,
            CheckoutInfo {
                root: display_path(&wt.root),
                requested: path_text.clone(),
                origin,
                overriding,
                header: header.as_ref().map(|f| f.value.clone()),
                head: wt.head.current.clone(),
                detached: wt.head.detached,
                declared_branch: None,
                branch_matches: None,
            },
        );
    }

    if report.count(Severity::Error) == 0
        && let Some(wt) = work_tree
    {
        report.citations = Some(resolved(doc, &wt, &citations));
    }
    report.finish();
    report
}

/// The citations resolved against `wt`, each followed from the handoff's `head:` where it has
/// one (docs/gate.md §3.5).
fn resolved(
    doc: &Document,
    wt: &git::WorkTree,
    citations: &[crate::citation::CitationLine],
) -> crate::resolve::Resolution {
    let head = doc.field("head");
    let mut resolver = Resolver::new(wt);
    if head.is_some() {
        resolver = resolver.counting();
    }
    let mut resolution = resolver.resolve(citations);
    if let Some(head) = head {
        resolver.follow(&mut resolution, &head.value);
    }
    resolution
}

/// Record the checkout the citations resolve against, with the branch the handoff declares
/// and whether HEAD is on it (a WARN when it is not).
fn note_checkout(report: &mut Report, doc: &Document, wt: &git::WorkTree, info: CheckoutInfo) {
    let declared = doc
        .field("branch")
        .and_then(|f| crate::document::envelope::declared_branch(&f.value).map(str::to_string));
    let matches = declared
        .as_deref()
        .map(|d| git::branch_matches(d, &wt.head));
    report.checkout = Some(CheckoutInfo {
        declared_branch: declared.clone(),
        branch_matches: matches,
        ..info
    });
    if let (Some(d), Some(false)) = (&declared, matches) {
        let branch_line = doc.field("branch").map(|f| doc.number(f.line));
        report.findings.push(
            Finding::new(
                Severity::Warn,
                crate::finding::Code::BranchMismatch,
                format!(
                    "handoff declares branch {d} but this checkout is on {cur} — citations resolve against {cur}",
                    cur = wt.head.current
                ),
                branch_line,
                Some(d.clone()),
            )
            .in_phase(Phase::Checkout),
        );
    }
}

/// Gate the handoff at `file`.
pub fn gate_file(file: &str, checkout: Option<&str>) -> Report {
    match input::read_path(Path::new(file)) {
        Ok(bytes) => gate_bytes(file, bytes, checkout),
        Err(e) => Report::from_input_error(Mode::Gate, file, e),
    }
}

/// Gate a handoff already read from `file` (the store passes the bytes it shows, so the file
/// is not read again).
pub fn gate_bytes(file: &str, bytes: Vec<u8>, checkout: Option<&str>) -> Report {
    gate_bytes_parsed(file, bytes, checkout).0
}

/// [`gate_bytes`], also handing back the parsed document (when the bytes were text), so a
/// caller that shows an excerpt does not parse it a second time.
pub(crate) fn gate_bytes_parsed(
    file: &str,
    bytes: Vec<u8>,
    checkout: Option<&str>,
) -> (Report, Option<Document>) {
    if bytes.len() as u64 > input::MAX_BYTES {
        return (
            Report::from_input_error(Mode::Gate, file, InputError::TooLarge),
            None,
        );
    }
    match input::to_text(bytes, false) {
        Ok(text) => {
            let doc = Document::parse(&text);
            (document(&doc, file, checkout), Some(doc))
        }
        Err(e) => (Report::from_input_error(Mode::Gate, file, e), None),
    }
}

fn read_citations(file: Option<&str>) -> Result<String, InputError> {
    let bytes = match file {
        None | Some("-") => input::read_capped(std::io::stdin().lock()),
        Some(f) => input::read_path(Path::new(f)),
    }?;
    input::to_text(bytes, true)
}

/// Resolve a citation list (docs/gate.md §3.1).
pub(crate) fn citations(file: Option<&str>, checkout: Option<&str>) -> Report {
    let name = file.unwrap_or("-");
    let text = match read_citations(file) {
        Ok(t) => t,
        Err(e) => return Report::from_input_error(Mode::Citations, name, e),
    };
    let mut report = Report::new(Mode::Citations, name);
    let (path, origin) = match checkout.filter(|c| !c.is_empty()) {
        Some(dir) => (PathBuf::from(dir), Origin::Argument),
        None => (
            std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            Origin::Cwd,
        ),
    };
    let requested = path.to_string_lossy().into_owned();
    let wt = match git::open_work_tree(&path, true) {
        Ok(wt) => wt,
        Err(e) => {
            report.findings.push(checkout_error(e, &requested, None));
            report.finish();
            return report;
        }
    };
    report.checkout = Some(CheckoutInfo {
        root: wt.root.to_string_lossy().into_owned(),
        requested,
        origin,
        overriding: None,
        header: None,
        head: wt.head.current.clone(),
        detached: wt.head.detached,
        declared_branch: None,
        branch_matches: None,
    });
    let lines = citation::parse_lines(
        input::split_lines(&text)
            .into_iter()
            .enumerate()
            .map(|(i, l)| (i + 1, l)),
    );
    if let Some(refusal) = resolve::input_guard(&lines) {
        report.findings.push(refusal.finding());
    } else {
        report.citations = Some(Resolver::new(&wt).resolve(&lines));
    }
    report.finish();
    report
}
