//! The gate's checks (docs/gate.md §2): pure functions over the parsed `Document` — contract,
//! coverage, size — plus the `checkout:` header's expansion and the checkout errors. Running
//! them in order with the checkout and the resolver is `report::run_gate`'s job, one layer up.

pub(crate) mod contract;
pub(crate) mod coverage;
pub(crate) mod size;

use std::path::{Path, PathBuf};

use crate::env::Tilde;
use crate::finding::{Code, Finding, Phase, Severity};
use crate::git::WorkTreeError;

/// The `checkout:` header after expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeaderCheckout {
    Absent,
    Empty,
    Usable(PathBuf),
    NotAbsolute,
    HomeUnknown,
}

/// Expand a `checkout:` value: `~` and `~/` to home, a relative value against the directory
/// holding the handoff file.
pub(crate) fn expand_checkout(value: &str, file: &Path) -> HeaderCheckout {
    if value.is_empty() {
        return HeaderCheckout::Empty;
    }
    match crate::env::tilde(value) {
        Tilde::Expanded(p) => return HeaderCheckout::Usable(p),
        Tilde::HomeUnknown => return HeaderCheckout::HomeUnknown,
        Tilde::Other => return HeaderCheckout::NotAbsolute,
        Tilde::None => {}
    }
    let path = Path::new(value);
    if path.is_absolute() {
        return HeaderCheckout::Usable(path.to_path_buf());
    }
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    HeaderCheckout::Usable(dir.join(path))
}

pub(crate) fn display_path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The message of a `checkout_*` error for path text `p`.
pub(crate) fn checkout_error(err: WorkTreeError, p: &str, line: Option<usize>) -> Finding {
    let (code, text) = match err {
        WorkTreeError::NotFound => (
            Code::CheckoutNotFound,
            format!("checkout {p} does not exist"),
        ),
        WorkTreeError::NotDirectory => (
            Code::CheckoutNotDirectory,
            format!("checkout {p} is not a directory"),
        ),
        WorkTreeError::NotGit => (
            Code::CheckoutNotGit,
            format!("checkout {p} is not inside a git repository"),
        ),
        WorkTreeError::Bare => (
            Code::CheckoutBare,
            format!("checkout {p} is a bare repository; citations need a work tree"),
        ),
    };
    Finding::new(Severity::Error, code, text, line, None).in_phase(Phase::Checkout)
}
