//! The token rules of the credential scan (`super::scan`): each a kind, the literal triggers a
//! line must hold before its regex runs, and the regex. The provider prefixes and shapes are
//! gitleaks' default rules, taken as facts; the corpora in `tests/cli/credentials.rs` measure
//! them.

use std::sync::OnceLock;

use regex::Regex;

use super::re;

/// A token rule: its kind, the literal triggers a line must hold before its regex runs (so a
/// clean document compiles no regex at all), and the regex, compiled on first use. The
/// provider prefixes and shapes are gitleaks' default rules, taken as facts.
pub(super) struct Rule {
    pub(super) kind: &'static str,
    pub(super) triggers: &'static [&'static str],
    pub(super) pattern: &'static str,
    regex: OnceLock<Regex>,
}

impl Rule {
    pub(super) fn is_match(&self, line: &str) -> bool {
        self.regex.get_or_init(|| re(self.pattern)).is_match(line)
    }
}

pub(super) static TOKEN_RULES: [Rule; RULES] = [
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
pub(super) const RULES: usize = 73;
const _: () = assert!(RULES <= 128, "a line's candidates are a u128");
