//! Issue 30.5: the credential scan measured against a corpus — realistic credentials in the
//! forms people and agents write them (config lines, connection strings, headers, webhook URLs,
//! `.netrc`, prose that goes on after the value), each refused by the gate (exit 2, the value
//! never echoed); and innocent text a handoff holds (placeholders, types, code, prose about
//! passwords and tokens), each accepted. Every value here is made up.

use crate::util::*;

/// Credentials, one per line as a handoff might carry it.
const CREDENTIALS: &[&str] = &[
    "AKIAIOSFODNN7EXAMPLE is the deploy user's key id",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "Staging uses AWS_SECRET_ACCESS_KEY = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY until rotation.",
    "export GITHUB_TOKEN=ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV",
    "CI pushes with glpat-a1b2c3d4e5f6g7h8i9j0",
    "bot token xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "alerts post to https://hooks.slack.com/services/T01ABCDEF/B01ABCDEF/a1b2c3d4e5f6g7h8i9j0k1l2",
    "https://discord.com/api/webhooks/123456789012345678/abcdefghijklmnopqrstuvwxyz0123456789ABCD",
    "maps key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "restricted key rk_test_51H8a2b3c4d5e6f7g8h9i0j",
    "npm_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8",
    "pypi-AgEIcHlwaS5vcmcCJGE0ZjYxYjYyLWI3NzktNDk1NS1hYmM0LTk3Mjc1NmE0ZDRjYgACKlszLCJ",
    "hf_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6",
    "SENDGRID=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",
    "Twilio key SK0123456789abcdef0123456789abcdef for the SMS job",
    "DO token dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA==' https://api.example.com",
    "Authorization: Bearer abcdef0123456789abcdef",
    "authorization: token 0123456789abcdef0123",
    "machine api.example.com login bob password s3cr3tPa55",
    "the cache is redis://:p4ssw0rd@cache.internal:6379/0",
    "connect with postgres://admin:pw@db.internal:5432/app",
    "mongodb+srv://app:Sup3rS3cret@cluster0.mongodb.net/db",
    "ftp://user:letmein1@files.example.com/",
    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net",
    "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG=",
    "Server=db;Database=app;User Id=sa;Password=Hunter2Hunter2;",
    "password=hunter2",
    "DB_PASSWORD = Tr0ub4dor3horsebattery",
    "The staging config holds DB_PASSWORD = hunter2hunter2 for now.",
    "mail_password: Summer2024!",
    "\"private_key_id\": \"1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b\",",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "OPENAI_API_KEY=sk-proj-a1B2c3D4e5F6g7H8i9J0k1L2",
    "the model key is sk-ant-api03-a1B2c3D4e5F6g7H8i9J0k1L2m3N4",
    "\"client_secret\": \"GOCSPX-1a2b3c4d5e6f7g8h9i0j\"",
    "api_key: a1b2c3d4e5f6g7h8i9j0",
    "SECRET_KEY='django-insecure-7x#k2!p@9q$w3e4r5t6y7u8i9o0'",
    "STRIPE_WEBHOOK_SECRET=whsec_1234567890abcdefghijklmn",
    "auth_token = 0123456789abcdef0123456789abcdef",
    "DB_PASS=sup3rs3cr3t and DB_PASSWORD=sup3rs3cr3t",
];

/// Text a handoff may hold that is no credential.
const INNOCENT: &[&str] = &[
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
    "`password: string;` in the form's type",
    "password_min_length = 12",
    "curl -H \"Authorization: Bearer $TOKEN\" https://api.example.com",
    "The API expects a Bearer token in the Authorization header.",
    "machine learning models need login flows; password reset is next",
    "the health check is http://localhost:8080/health",
    "git@github.com:owner/repo.git is the upstream",
    "SKU-1234 ships in the ASK flow",
    "max_tokens = 4096 per request",
    "password: ********",
    "csrf_token = generate_token()",
    "secret_key = config.secret_key",
    "The secret: keep decisions verbatim.",
    "Set DB_PASSWORD in the environment before running the migration.",
    "AccountKey= is read from the vault at startup",
    "alerts go to hooks.slack.com, configured in ops",
    "a passphrase: correct horse battery staple",
    "Authorization: Bearer <token>",
    "The token expires after 3600 seconds; refresh it with the CLI.",
];

fn gate(env: &TestEnv, shop: &std::path::Path, line: &str) -> Outcome {
    let doc = canonical(&shop.to_string_lossy(), "main")
        .replace("### Traps\n- None.", &format!("### Traps\n- {line}"));
    run(env.verify().arg(env.write("h.md", doc)).arg(shop))
}

#[test]
fn every_credential_in_the_corpus_is_refused_and_never_echoed() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let mut missed = Vec::new();
    for line in CREDENTIALS {
        let o = gate(&env, &shop, line);
        if o.code != 2 || !o.stderr.contains("looks like a credential") {
            missed.push(format!("{line} (exit {})", o.code));
        }
        assert!(
            !o.stdout.contains(line) && !o.stderr.contains(line),
            "echoed: {line}"
        );
    }
    assert!(
        missed.is_empty(),
        "{} of {} not refused:\n{}",
        missed.len(),
        CREDENTIALS.len(),
        missed.join("\n")
    );
}

#[test]
fn no_innocent_line_in_the_corpus_is_refused() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let refused: Vec<String> = INNOCENT
        .iter()
        .filter_map(|line| {
            let o = gate(&env, &shop, line);
            (o.code != 0).then(|| format!("{line} (exit {}): {}", o.code, o.stderr.trim()))
        })
        .collect();
    assert!(
        refused.is_empty(),
        "{} of {} refused:\n{}",
        refused.len(),
        INNOCENT.len(),
        refused.join("\n")
    );
}
