//! What every check and the resolver produce: a `Finding` with its severity and phase, and the
//! checkout's origin. It sits below the parser, the resolver and the gate so that all of them
//! can produce findings and the report can render them, with no arrow pointing up.

use serde::Serialize;

/// Severity of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Severity {
    Error,
    Fail,
    Warn,
}

/// Where the checkout came from (docs/gate.md §2.9, JSON `origin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    Argument,
    ArgumentOverriding,
    Header,
    Cwd,
    CwdHeaderNotAbsolute,
}

impl Origin {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Origin::Argument => "argument",
            Origin::ArgumentOverriding => "argument_overriding",
            Origin::Header => "header",
            Origin::Cwd => "cwd",
            Origin::CwdHeaderNotAbsolute => "cwd_header_not_absolute",
        }
    }
}

/// Where a finding is printed relative to the size and checkout lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Document,
    AfterSize,
    Checkout,
}

/// The `not_a_citation_list` details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct GuardDetails {
    pub(crate) candidates: usize,
    pub(crate) with_whitespace: usize,
    pub(crate) examples: Vec<String>,
}

impl GuardDetails {
    pub(crate) const HEADLINE: &'static str =
        "this does not look like a citation list, so nothing was checked.";

    /// The input guard's stderr block (docs/gate.md §3.2), line by line.
    pub(crate) fn block(&self) -> Vec<String> {
        let mut out = vec![
            format!("ERROR: {}", Self::HEADLINE),
            String::new(),
            format!(
                "{} of {} input lines contain whitespace where a path or",
                self.with_whitespace, self.candidates
            ),
            "symbol should be. This script takes ONE CITATION PER LINE, not a document:".into(),
            "piping prose in reports every sentence as MISSING, which is indistinguishable".into(),
            "from real citation rot. Extract the citations first, then pipe those.".into(),
            String::new(),
            "First lines that are not citation-shaped:".into(),
        ];
        out.extend(self.examples.iter().map(|x| format!("  {x}")));
        out
    }
}

/// What a finding is, as JSON names it (`code`, docs/gate.md): one enum, so a check that asks
/// "is this a credential?" asks the compiler, not a string.
macro_rules! codes {
    ($($variant:ident => $name:literal,)*) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Code {
            $($variant,)*
        }

        impl Code {
            /// The code as the JSON report spells it.
            pub(crate) fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)*
                }
            }
        }
    };
}

codes! {
    BranchMismatch => "branch_mismatch",
    CheckoutBare => "checkout_bare",
    CheckoutHomeUnknown => "checkout_home_unknown",
    CheckoutNotAbsolute => "checkout_not_absolute",
    CheckoutNotDirectory => "checkout_not_directory",
    CheckoutNotFound => "checkout_not_found",
    CheckoutNotGit => "checkout_not_git",
    ControlCharacter => "control_character",
    DeadPointer => "dead_pointer",
    FenceUnclosed => "fence_unclosed",
    FieldEmpty => "field_empty",
    FieldLate => "field_late",
    FieldMissing => "field_missing",
    InvisibleCharacter => "invisible_character",
    NotACitationList => "not_a_citation_list",
    PathSymbol => "path_symbol",
    PointersNoFence => "pointers_no_fence",
    PointersUnclosed => "pointers_unclosed",
    ProgressInvalid => "progress_invalid",
    Secret => "secret",
    SectionEmpty => "section_empty",
    SectionMissing => "section_missing",
    SizeOverCeiling => "size_over_ceiling",
    SizeOverTarget => "size_over_target",
    ThresholdInvalid => "threshold_invalid",
    ThresholdsFileMissing => "thresholds_file_missing",
    TitleMissing => "title_missing",
    Unbackticked => "unbackticked",
    UncoveredEvidence => "uncovered_evidence",
    UncoveredMention => "uncovered_mention",
}

/// One diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub(crate) severity: Severity,
    pub(crate) code: Code,
    pub(crate) message: String,
    pub(crate) line: Option<usize>,
    pub(crate) subject: Option<String>,
    pub(crate) details: Option<GuardDetails>,
    pub(crate) phase: Phase,
}

impl Finding {
    pub(crate) fn new(
        severity: Severity,
        code: Code,
        message: String,
        line: Option<usize>,
        subject: Option<String>,
    ) -> Finding {
        Finding {
            severity,
            code,
            message,
            line,
            subject,
            details: None,
            phase: Phase::Document,
        }
    }

    pub(crate) fn in_phase(mut self, phase: Phase) -> Finding {
        self.phase = phase;
        self
    }

    /// Text lines: the 9-column prefix plus the message, or the guard's block.
    pub(crate) fn lines(&self) -> Vec<String> {
        if let Some(details) = &self.details {
            return details.block();
        }
        let prefix = match self.severity {
            Severity::Error => "ERROR    ",
            Severity::Fail => "FAIL     ",
            Severity::Warn => "WARN     ",
        };
        vec![format!("{prefix}{}", self.message)]
    }
}
