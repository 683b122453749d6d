//! Credential detection (docs/gate.md §2.5). A handoff is injected into model context and stored in
//! plain files, so a credential is a contract violation. The matched text is never kept: the
//! scan returns line numbers and kinds only, and the document model blanks the flagged lines.

use std::sync::{LazyLock, OnceLock};

use regex::Regex;

/// One flagged line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// 1-based line number.
    pub(crate) line: usize,
    pub(crate) kind: &'static str,
}

/// The scan: the hits and which lines later steps must treat as empty.
#[derive(Debug, Clone, Default)]
pub struct SecretScan {
    pub hits: Vec<Secret>,
    pub(crate) blank: Vec<bool>,
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap()
}

static KEY_BEGIN: LazyLock<Regex> =
    LazyLock::new(|| re(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"));
static KEY_END: LazyLock<Regex> =
    LazyLock::new(|| re(r"-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"));
/// A token rule: its kind, the literal triggers a line must hold before its regex runs (so a
/// clean document compiles no regex at all), and the regex, compiled on first use. The
/// provider prefixes and shapes are gitleaks' default rules, taken as facts.
struct Rule {
    kind: &'static str,
    triggers: &'static [&'static str],
    pattern: &'static str,
    regex: OnceLock<Regex>,
}

impl Rule {
    fn is_match(&self, line: &str) -> bool {
        self.regex.get_or_init(|| re(self.pattern)).is_match(line)
    }
}

static TOKEN_RULES: [Rule; RULES] = [
    Rule {
        kind: "AWS access key id",
        triggers: &["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
        pattern: r"(?-u:\b)(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "GitHub token",
        triggers: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        pattern: r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{36,}(?-u:\b)|(?-u:\b)github_pat_[A-Za-z0-9_]{22,}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Slack token",
        triggers: &["xox", "xapp-"],
        pattern: r"(?-u:\b)xox[abposre]-[A-Za-z0-9-]{10,}|(?-u:\b)xoxe\.xox[bp]-\d-[A-Za-z0-9]{160,}|(?-u:\b)xapp-\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Slack webhook",
        triggers: &["hooks.slack.com"],
        pattern: r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_]{6,}/[A-Za-z0-9_/]{6,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Discord webhook",
        triggers: &["/api/webhooks/"],
        pattern: r"discord(?:app)?\.com/api/webhooks/[0-9]{6,}/[A-Za-z0-9_-]{20,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Google API key",
        triggers: &["AIza"],
        pattern: r"(?-u:\b)AIza[0-9A-Za-z_-]{35}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "JSON web token",
        triggers: &["eyJ"],
        pattern: r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Stripe key",
        triggers: &["_live_", "_test_", "_prod_"],
        pattern: r"(?-u:\b)(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{10,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "npm token",
        triggers: &["npm_"],
        pattern: r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "PyPI token",
        triggers: &["pypi-"],
        pattern: r"(?-u:\b)pypi-AgE[A-Za-z0-9_-]{50,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Hugging Face token",
        triggers: &["hf_", "api_org_"],
        pattern: r"(?-u:\b)hf_[A-Za-z0-9]{30,}(?-u:\b)|(?-u:\b)api_org_[A-Za-z]{34}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "SendGrid key",
        triggers: &["SG."],
        pattern: r"(?-u:\b)SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Twilio API key",
        triggers: &["SK"],
        pattern: r"(?-u:\b)SK[0-9a-fA-F]{32}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "DigitalOcean token",
        triggers: &["_v1_"],
        pattern: r"(?-u:\b)do[opr]_v1_[a-f0-9]{64}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Authorization header",
        triggers: &["uthorization", "UTHORIZATION"],
        // The credential after the scheme: a placeholder ($TOKEN, <token>, {…}) is not one.
        pattern: r"(?i)authorization\s*[:=]\s*(?:basic|bearer|token|digest)\s+[A-Za-z0-9+/._~-]{12,}=*",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "netrc entry",
        triggers: &["machine"],
        pattern: r"(?-u:\b)machine\s+\S+\s+(?:login\s+\S+\s+)?password\s+[^\s$<{*]\S{3,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "password in a URL",
        triggers: &["://"],
        // scheme://[user]:password@host — a placeholder password ($VAR, <…>, {…}, ***) is not
        // one.
        pattern: r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:[^\s/@$<{*%]+@[^\s/@]",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "connection string key",
        triggers: &["ccountKey=", "ccessKey=", "ccountkey="],
        pattern: r"(?i)(?:AccountKey|SharedAccessKey)\s*=\s*[A-Za-z0-9+/]{20,}=*",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "1Password secret key",
        triggers: &["A3-"],
        pattern: r"(?-u:\b)A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "1Password service account token",
        triggers: &["ops_eyJ"],
        pattern: r"ops_eyJ[A-Za-z0-9+/]{250,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Adobe client secret",
        triggers: &["p8e-"],
        pattern: r"(?-u:\b)p8e-[A-Za-z0-9]{32}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "age secret key",
        triggers: &["AGE-SECRET-KEY-1"],
        pattern: r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Airtable token",
        triggers: &["pat"],
        pattern: r"(?-u:\b)pat[A-Za-z0-9]{14}\.[a-f0-9]{64}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Alibaba access key id",
        triggers: &["LTAI"],
        pattern: r"(?-u:\b)LTAI[A-Za-z0-9]{20}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Artifactory key",
        triggers: &["AKCp", "cmVmd"],
        pattern: r"(?-u:\b)AKCp[A-Za-z0-9]{69}|(?-u:\b)cmVmd[A-Za-z0-9]{59}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Amazon Bedrock key",
        triggers: &["ABSK", "bedrock-api-key-"],
        pattern: r"(?-u:\b)ABSK[A-Za-z0-9+/]{109,}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "ClickHouse key",
        triggers: &["4b1d"],
        pattern: r"(?-u:\b)4b1d[A-Za-z0-9]{38}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Clojars token",
        triggers: &["CLOJARS_"],
        pattern: r"CLOJARS_[A-Za-z0-9]{60}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Cloudflare origin CA key",
        triggers: &["v1.0-"],
        pattern: r"(?-u:\b)v1\.0-[a-f0-9]{24}-[a-f0-9]{146}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Databricks token",
        triggers: &["dapi"],
        pattern: r"(?-u:\b)dapi[a-f0-9]{32}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Doppler token",
        triggers: &["dp.pt."],
        pattern: r"dp\.pt\.[A-Za-z0-9]{43}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Duffel token",
        triggers: &["duffel_"],
        pattern: r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Dynatrace token",
        triggers: &["dt0c01."],
        pattern: r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "EasyPost token",
        triggers: &["EZAK", "EZTK"],
        pattern: r"(?-u:\b)EZ[AT]K[A-Za-z0-9]{54}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Facebook page token",
        triggers: &["EAAM", "EAAC"],
        pattern: r"(?-u:\b)EAA[MC][A-Za-z0-9]{100,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Flutterwave key",
        triggers: &["FLWSECK_TEST-", "FLWPUBK_TEST-"],
        pattern: r"FLW(?:SECK|PUBK)_TEST-[a-hA-H0-9]{12,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Fly.io token",
        triggers: &["fo1_", "fm1a_", "fm1r_", "fm2_"],
        pattern: r"(?-u:\b)fo1_[A-Za-z0-9_-]{43}|(?-u:\b)fm1[ar]_[A-Za-z0-9+/]{100,}|(?-u:\b)fm2_[A-Za-z0-9+/]{100,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Frame.io token",
        triggers: &["fio-u-"],
        pattern: r"fio-u-[A-Za-z0-9_=-]{64}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "GitLab token",
        triggers: &[
            "glpat-",
            "glcbt-",
            "gldt-",
            "glffct-",
            "glft-",
            "glimt-",
            "glagent-",
            "gloas-",
            "glptt-",
            "glrt-",
            "glsoat-",
            "GR1348941",
            "_gitlab_session=",
        ],
        pattern: r"(?-u:\b)gl(?:pat|dt|ffct|ft|rt|soat)-[A-Za-z0-9_-]{20}|(?-u:\b)glcbt-[0-9a-zA-Z]{1,5}_[A-Za-z0-9_-]{20}|(?-u:\b)glimt-[A-Za-z0-9_-]{25}|(?-u:\b)glagent-[A-Za-z0-9_-]{50}|(?-u:\b)gloas-[A-Za-z0-9_-]{64}|(?-u:\b)glptt-[0-9a-f]{40}|GR1348941[A-Za-z0-9_-]{20}|_gitlab_session=[0-9a-z]{32}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Grafana token",
        triggers: &["eyJrIjoi", "glc_", "glsa_"],
        pattern: r"(?-u:\b)eyJrIjoi[A-Za-z0-9]{70,}|(?-u:\b)glc_[A-Za-z0-9+/]{32,}|(?-u:\b)glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Harness key",
        triggers: &["pat.", "sat."],
        pattern: r"(?-u:\b)(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Terraform Cloud token",
        triggers: &[".atlasv1."],
        pattern: r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Heroku key",
        triggers: &["HRKU-AA"],
        pattern: r"(?-u:\b)HRKU-AA[0-9A-Za-z_-]{58}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Infracost token",
        triggers: &["ico-"],
        pattern: r"(?-u:\b)ico-[A-Za-z0-9]{32}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "42 Intra secret",
        triggers: &["s-s4t2"],
        pattern: r"(?-u:\b)s-s4t2(?:ud|af)-[a-f0-9]{64}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Linear key",
        triggers: &["lin_api_"],
        pattern: r"lin_api_[A-Za-z0-9]{40}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "MaxMind license key",
        triggers: &["_mmk"],
        pattern: r"(?-u:\b)[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Notion token",
        triggers: &["ntn_"],
        pattern: r"(?-u:\b)ntn_[0-9]{11}[A-Za-z0-9]{35}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Octopus Deploy key",
        triggers: &["API-"],
        pattern: r"(?-u:\b)API-[A-Z0-9]{26}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "OpenShift token",
        triggers: &["sha256~"],
        pattern: r"(?-u:\b)sha256~[A-Za-z0-9_-]{43}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Perplexity key",
        triggers: &["pplx-"],
        pattern: r"(?-u:\b)pplx-[A-Za-z0-9]{48}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "PlanetScale token",
        triggers: &["pscale_"],
        pattern: r"(?-u:\b)pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Postman key",
        triggers: &["PMAK-"],
        pattern: r"(?-u:\b)PMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Prefect token",
        triggers: &["pnu_"],
        pattern: r"(?-u:\b)pnu_[A-Za-z0-9]{36}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Pulumi token",
        triggers: &["pul-"],
        pattern: r"(?-u:\b)pul-[a-f0-9]{40}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "ReadMe token",
        triggers: &["rdme_"],
        pattern: r"(?-u:\b)rdme_[a-z0-9]{70}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "RubyGems token",
        triggers: &["rubygems_"],
        pattern: r"(?-u:\b)rubygems_[a-f0-9]{48}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Scalingo token",
        triggers: &["tk-us-"],
        pattern: r"(?-u:\b)tk-us-[A-Za-z0-9_-]{48}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Brevo key",
        triggers: &["xkeysib-"],
        pattern: r"(?-u:\b)xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Sentry token",
        triggers: &["sntryu_", "sntrys_"],
        pattern: r"(?-u:\b)sntryu_[a-f0-9]{64}|(?-u:\b)sntrys_eyJpYXQiO[A-Za-z0-9+/=_]{50,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "SettleMint token",
        triggers: &["sm_aat_", "sm_pat_", "sm_sat_"],
        pattern: r"(?-u:\b)sm_[aps]at_[A-Za-z0-9]{16}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Shippo token",
        triggers: &["shippo_"],
        pattern: r"(?-u:\b)shippo_(?:live|test)_[a-fA-F0-9]{40}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Shopify token",
        triggers: &["shpat_", "shpca_", "shppa_", "shpss_"],
        pattern: r"(?-u:\b)shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Sourcegraph token",
        triggers: &["sgp_"],
        pattern: r"(?-u:\b)sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Square token",
        triggers: &["sq0atp-", "EAAA"],
        pattern: r"(?-u:\b)(?:EAAA|sq0atp-)[A-Za-z0-9_-]{22,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Vault token",
        triggers: &["hvb.", "hvs."],
        pattern: r"(?-u:\b)hvb\.[A-Za-z0-9_-]{138,}|(?-u:\b)hvs\.[A-Za-z0-9_-]{90,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Docker token",
        triggers: &["dckr_pat_"],
        pattern: r"(?-u:\b)dckr_pat_[A-Za-z0-9_-]{27}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Google OAuth token",
        triggers: &["ya29."],
        pattern: r"(?-u:\b)ya29\.[0-9A-Za-z_-]{20,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Telegram bot token",
        triggers: &[":AA"],
        pattern: r"(?-u:\b)[0-9]{8,10}:AA[0-9A-Za-z_-]{33}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Atlassian token",
        triggers: &["ATATT3x"],
        pattern: r"(?-u:\b)ATATT3x[A-Za-z0-9_=-]{40,}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Mailgun key",
        triggers: &["key-"],
        pattern: r"(?-u:\b)key-[0-9a-f]{32}(?-u:\b)",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Microsoft Teams webhook",
        triggers: &["webhook.office.com"],
        pattern: r"https://[a-z0-9]+\.webhook\.office\.com/webhookb2/[a-z0-9-]{36}@[a-z0-9-]{36}/IncomingWebhook/[a-z0-9]{32}/[a-z0-9-]{36}",
        regex: OnceLock::new(),
    },
    Rule {
        kind: "Sidekiq credentials",
        triggers: &["contribsys.com"],
        pattern: r"(?i)https?://[a-f0-9]{8}:[a-f0-9]{8}@(?:gems|enterprise)\.contribsys\.com",
        regex: OnceLock::new(),
    },
];

/// How many token rules there are (a line's candidates are a bit set of them).
const RULES: usize = 73;
const _: () = assert!(RULES <= 128, "a line's candidates are a u128");

/// Every rule's triggers in one automaton: one pass over a line finds which rules may match.
static TRIGGERS: LazyLock<(aho_corasick::AhoCorasick, Vec<usize>)> = LazyLock::new(|| {
    let mut patterns = Vec::new();
    let mut rule_of = Vec::new();
    for (i, rule) in TOKEN_RULES.iter().enumerate() {
        for t in rule.triggers {
            patterns.push(*t);
            rule_of.push(i);
        }
    }
    let ac = aho_corasick::AhoCorasick::new(patterns)
        .unwrap_or_else(|_| unreachable!("the triggers are a fixed, small set of literals"));
    (ac, rule_of)
});

/// The first token rule (in table order) whose regex matches `line`, its triggers found first.
fn token_kind(line: &str) -> Option<&'static str> {
    let (ac, rule_of) = &*TRIGGERS;
    let mut candidates: u128 = 0;
    for m in ac.find_overlapping_iter(line) {
        candidates |= 1 << rule_of[m.pattern().as_usize()];
    }
    while candidates != 0 {
        let i = candidates.trailing_zeros() as usize;
        candidates &= candidates - 1;
        if TOKEN_RULES[i].is_match(line) {
            return Some(TOKEN_RULES[i].kind);
        }
    }
    None
}

static SK_KEY: LazyLock<Regex> = LazyLock::new(|| re(r"(?-u:\b)sk-([A-Za-z0-9_-]{20,})"));

const ASSIGNMENT: &str = "password or token assignment";

/// Scan every line (fences, Pointers, Next and Unverifiable included).
pub fn scan<S: AsRef<str>>(lines: &[S]) -> SecretScan {
    let mut out = SecretScan {
        hits: Vec::new(),
        blank: vec![false; lines.len()],
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].as_ref();
        if line.contains("PRIVATE KEY") && KEY_BEGIN.is_match(line) {
            out.hits.push(Secret {
                line: i + 1,
                kind: "private key block",
            });
            let end = (i..lines.len())
                .find(|&j| {
                    lines[j].as_ref().contains("PRIVATE KEY") && KEY_END.is_match(lines[j].as_ref())
                })
                .unwrap_or(lines.len() - 1);
            out.blank[i..=end].fill(true);
            i = end + 1;
            continue;
        }
        if let Some(kind) = line_kind(line) {
            out.hits.push(Secret { line: i + 1, kind });
            out.blank[i] = true;
        }
        i += 1;
    }
    out
}

fn line_kind(line: &str) -> Option<&'static str> {
    if let Some(kind) = token_kind(line) {
        return Some(kind);
    }
    let sk = line.contains("sk-")
        && SK_KEY.captures_iter(line).any(|c| {
            let body = c.get(1).map_or("", |m| m.as_str());
            body.bytes().any(|b| b.is_ascii_digit())
                && body.bytes().any(|b| b.is_ascii_alphabetic())
        });
    if sk {
        return Some("sk- API key");
    }
    has_assignment(line).then_some(ASSIGNMENT)
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

const KEY_ENDINGS: [&str; 16] = [
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "api-key",
    "access_key",
    "secret_key",
    "private_key",
    "private_key_id",
    "accountkey",
    "client_secret",
    "auth_token",
    "passphrase",
];

/// Keys whose value is a password: a person's, short as `hunter2`, still one.
const PASSWORD_ENDINGS: [&str; 4] = ["password", "passwd", "pwd", "passphrase"];

/// The generic `key = value` rule, over every maximal key run of the line.
fn has_assignment(line: &str) -> bool {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !is_key_byte(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_key_byte(bytes[i]) {
            i += 1;
        }
        let key = &bytes[start..i];
        if !KEY_ENDINGS.iter().any(|e| ends_with_ignore_case(key, e)) {
            continue;
        }
        let password = PASSWORD_ENDINGS
            .iter()
            .any(|e| ends_with_ignore_case(key, e));
        if assigned_value(&line[i..]).is_some_and(|v| is_credential_value(v, password)) {
            return true;
        }
    }
    false
}

/// Whether `key` ends with `ending` (lower case), ignoring ASCII case; no allocation, as this
/// runs on every word of every line.
fn ends_with_ignore_case(key: &[u8], ending: &str) -> bool {
    key.len() >= ending.len()
        && key[key.len() - ending.len()..].eq_ignore_ascii_case(ending.as_bytes())
}

/// The value assigned right after a key, in either accepted form.
fn assigned_value(after_key: &str) -> Option<&str> {
    if let Some(rest) = after_key.strip_prefix('=') {
        let end = rest
            .find(|c: char| {
                crate::text::is_ws(c) || matches!(c, '"' | '\'' | '`' | '&' | ';' | ',')
            })
            .unwrap_or(rest.len());
        if end > 0 {
            return (!is_code(&rest[..end])).then_some(&rest[..end]);
        }
    }
    let rest = after_key.strip_prefix(['"', '\'']).unwrap_or(after_key);
    let rest = rest.trim_start_matches([' ', '\t']);
    let rest = rest.strip_prefix(['=', ':'])?;
    let rest = rest.trim_start_matches([' ', '\t']);
    match rest.chars().next()? {
        quote @ ('"' | '\'') => {
            let value = &rest[1..];
            value.find(quote).map(|end| &value[..end])
        }
        // Unquoted, as in `DB_PASSWORD = value` or YAML's `password: value`: the first word,
        // so prose that goes on after it (`holds DB_PASSWORD = hunter2hunter2 for now.`) is
        // judged on the value alone; a sentence's own words are no credential.
        _ => {
            let value = rest
                .split(|c: char| crate::text::is_ws(c) || matches!(c, ';' | ','))
                .next()
                .unwrap_or("")
                .trim_end_matches(['.', ')', ']', '`']);
            (!value.is_empty() && !is_code(value)).then_some(value)
        }
    }
}

/// An unquoted value that is code, not a credential: a dotted path (`settings.db_password`), a
/// call, an index or lookup (`os.environ["DB_PASSWORD"]`, `params[:password]`), a YAML tag
/// (`!vault`).
fn is_code(v: &str) -> bool {
    if v.contains(['(', '[']) || v.starts_with('!') {
        return true;
    }
    // A dotted path.
    v.contains('.')
        && v.split('.').all(|part| {
            part.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
}

/// Whether `v` is a credential: not a placeholder (`$VAR`, `<…>`, `{…}`, `%…%`, `***`), and
/// either a machine secret (16 or more characters, letters and digits, no space) or, for a
/// password, 6 or more characters that are not all letters (`hunter2`, not `string`).
fn is_credential_value(v: &str, password: bool) -> bool {
    let placeholder = v.starts_with(['$', '<', '{', '%', '*'])
        || v.bytes()
            .all(|b| matches!(b, b'*' | b'x' | b'X' | b'.' | b'-'));
    if placeholder || crate::text::has_ws(v) {
        return false;
    }
    let letters = v.bytes().any(|b| b.is_ascii_alphabetic());
    let digits = v.bytes().any(|b| b.is_ascii_digit());
    let machine = v.chars().count() >= 16 && letters && digits;
    let person = password
        && v.chars().count() >= 6
        && letters
        && v.bytes().any(|b| !b.is_ascii_alphabetic());
    machine || person
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(line: &str) -> Option<&'static str> {
        scan(&[line]).hits.first().map(|s| s.kind)
    }

    #[test]
    fn flagged_examples() {
        assert_eq!(kind("DB_PASSWORD=Tr0ub4dor3horsebattery"), Some(ASSIGNMENT));
        assert_eq!(
            kind(r#""api_key": "a1b2c3d4e5f6g7h8i9j0""#),
            Some(ASSIGNMENT)
        );
        assert_eq!(
            kind("https://x/cb?token=abcdefgh12345678&x=1"),
            Some(ASSIGNMENT)
        );
        assert_eq!(
            kind("key AKIAABCDEFGHIJKLMNOP here"),
            Some("AWS access key id")
        );
        assert_eq!(
            kind(&format!("ghp_{}", "a1".repeat(18))),
            Some("GitHub token")
        );
        assert_eq!(kind("glpat-abcdefghij0123456789"), Some("GitLab token"));
        assert_eq!(kind("xoxb-1234567890-abc"), Some("Slack token"));
        assert_eq!(kind("sk-abc123def456ghi789jkl"), Some("sk- API key"));
    }

    #[test]
    fn issue_21_forms_are_flagged() {
        for (line, want) in [
            ("DB_PASSWORD = Tr0ub4dor3horsebattery", ASSIGNMENT),
            ("  password: Tr0ub4dor3horsebattery", ASSIGNMENT),
            (
                "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1",
                ASSIGNMENT,
            ),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1",
                ASSIGNMENT,
            ),
            (
                "connect with postgres://admin:pw@db.internal:5432/app",
                "password in a URL",
            ),
            (
                "key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q here",
                "Google API key",
            ),
            (
                "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "JSON web token",
            ),
            ("STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "Stripe key"),
            ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm token"),
            ("hf_abcdefghijklmnopqrstuvwxyz012345", "Hugging Face token"),
        ] {
            assert_eq!(kind(line), Some(want), "{line}");
        }
    }

    #[test]
    fn not_flagged_examples() {
        for line in [
            "password = settings.db_password_2024",
            "token=${GITHUB_TOKEN}",
            "HANDOFF_TARGET_TOKENS=4000",
            "password: <redacted>",
            "token: 4000",
            "sk-learn-pipeline-configuration",
            "the password: see the team vault, never the repository",
            "DB_PASSWORD = ${DB_PASSWORD}",
            "clone https://github.com/owner/repo.git and https://user:$TOKEN@host/x",
            "postgres://admin:<password>@db/app",
            "Tokens per turn: 2070 on average",
        ] {
            assert_eq!(kind(line), None, "{line}");
        }
    }

    #[test]
    fn every_token_rule_compiles_and_has_a_trigger() {
        for rule in &TOKEN_RULES {
            assert!(Regex::new(rule.pattern).is_ok(), "{}", rule.kind);
            assert!(!rule.triggers.is_empty(), "{}", rule.kind);
        }
    }

    #[test]
    fn key_block_is_blanked_to_its_end() {
        let lines = [
            "a",
            "-----BEGIN RSA PRIVATE KEY-----",
            "MIIE",
            "-----END RSA PRIVATE KEY-----",
            "b",
        ];
        let s = scan(&lines);
        assert_eq!(
            s.hits,
            vec![Secret {
                line: 2,
                kind: "private key block"
            }]
        );
        assert_eq!(s.blank, vec![false, true, true, true, false]);
    }
}
