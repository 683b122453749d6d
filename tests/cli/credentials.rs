//! The credential scan measured against a corpus — realistic credentials in the
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

/// Every line of `corpus` refused by the gate as a credential, its value never echoed.
fn assert_refused(corpus: &[&str]) {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let mut missed = Vec::new();
    for line in corpus {
        let o = gate(&env, &shop, line);
        if o.code != 2 || !o.stderr.contains("looks like a credential") {
            missed.push(format!("{line} (exit {})", o.code));
        }
        // The credential is its section's only item: the section is not empty.
        assert!(
            !o.stderr.contains("section is empty"),
            "{line}: a false empty section: {}",
            o.stderr
        );
        assert!(
            !o.stdout.contains(line) && !o.stderr.contains(line),
            "echoed: {line}"
        );
    }
    assert!(
        missed.is_empty(),
        "{} of {} not refused:\n{}",
        missed.len(),
        corpus.len(),
        missed.join("\n")
    );
}

/// Every line of `corpus` accepted by the gate (a line of several is gated as one).
fn assert_accepted(corpus: &[&str]) {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let refused: Vec<String> = corpus
        .iter()
        .filter_map(|line| {
            let o = gate(&env, &shop, &line.replace('\n', " "));
            (o.code != 0).then(|| format!("{line} (exit {}): {}", o.code, o.stderr.trim()))
        })
        .collect();
    assert!(
        refused.is_empty(),
        "{} of {} refused:\n{}",
        refused.len(),
        corpus.len(),
        refused.join("\n")
    );
}

#[test]
fn every_credential_in_the_corpus_is_refused_and_never_echoed() {
    assert_refused(CREDENTIALS);
}

#[test]
fn no_innocent_line_in_the_corpus_is_refused() {
    assert_accepted(INNOCENT);
}

/// One token of each provider prefix in gitleaks' default rules (their prefixes and shapes
/// taken as facts; every value made up), and the shapes a pass found missing.
const PROVIDERS: &[&str] = &[
    "xapp-1-A01BCDEFGH-1234567890123-0123456789abcdef0123456789abcdef",
    "xoxe-1-A1B2C3D4E5F6G7H8I9J0K1L2M3N4",
    "ATATT3xFfGF0a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6",
    "AGE-SECRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE6MUA",
    "gho_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "ghs_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "sk-ant-admin01-a1b2c3d4e5f6g7h8i9j0k1l2",
    "doo_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "dor_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "A3-ABCDEF-GHIJKLMNOPQ-RSTUV-WXYZ0-12345",
    "ops_eyJa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6",
    "p8e-a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6",
    "AGE-SECRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE",
    "pata1b2c3d4e5f6g7.0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "LTAIa1b2c3d4e5f6g7h8i9j0",
    "AKCpa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6g7h8i",
    "cmVmda1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d",
    "ABSKa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6g7h8",
    "4b1da1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9",
    "CLOJARS_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4",
    "v1.0-0123456789abcdef01234567-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef01",
    "dapi0123456789abcdef0123456789abcdef",
    "dp.pt.a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v",
    "duffel_live_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v",
    "dt0c01.A1B2C3D4E5F6G7H8I9J0K1L2.a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6",
    "EZAKa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1",
    "EZTKa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1",
    "EAAMa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6",
    "FLWSECK_TEST-a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6-X",
    "fo1_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v",
    "fm2_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6",
    "fio-u-a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6",
    "glcbt-a1b2c_a1b2c3d4e5f6g7h8i9j0",
    "gldt-a1b2c3d4e5f6g7h8i9j0",
    "glffct-a1b2c3d4e5f6g7h8i9j0",
    "glft-a1b2c3d4e5f6g7h8i9j0",
    "glimt-a1b2c3d4e5f6g7h8i9j0k1l2m",
    "glagent-a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5",
    "gloas-a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6",
    "glptt-0123456789abcdef0123456789abcdef01234567",
    "GR1348941a1b2c3d4e5f6g7h8i9j0",
    "glrt-a1b2c3d4e5f6g7h8i9j0",
    "glsoat-a1b2c3d4e5f6g7h8i9j0",
    "_gitlab_session=0123456789abcdef0123456789abcdef",
    "eyJrIjoia1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6g7h8i9j0",
    "glc_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6",
    "glsa_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6_0123abcd",
    "pat.a1b2c3d4e5f6g7h8i9j0k1.a1b2c3d4e5f6g7h8i9j0k1l2.a1b2c3d4e5f6g7h8i9j0",
    "a1b2c3d4e5f6g7.atlasv1.a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6",
    "HRKU-AAa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3",
    "ico-a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6",
    "s-s4t2ud-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "lin_api_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0",
    "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",
    "ntn_01234567890a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r",
    "API-A1B2C3D4E5F6G7H8I9J0K1L2M3",
    "sha256~a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v",
    "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",
    "pscale_tkn_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6",
    "pscale_oauth_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6",
    "pscale_pw_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6",
    "PMAK-0123456789abcdef01234567-0123456789abcdef0123456789abcdef01",
    "pnu_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8",
    "pul-0123456789abcdef0123456789abcdef01234567",
    "rdme_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6g7h8i9",
    "rubygems_0123456789abcdef0123456789abcdef0123456789abcdef",
    "tk-us-a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4",
    "xkeysib-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef-a1b2c3d4e5f6g7h8",
    "sntryu_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "sm_aat_a1b2c3d4e5f6g7h8",
    "sm_pat_a1b2c3d4e5f6g7h8",
    "shippo_live_0123456789abcdef0123456789abcdef01234567",
    "shpat_0123456789abcdef0123456789abcdef",
    "shpca_0123456789abcdef0123456789abcdef",
    "shppa_0123456789abcdef0123456789abcdef",
    "shpss_0123456789abcdef0123456789abcdef",
    "sgp_0123456789abcdef0123456789abcdef01234567",
    "sq0atp-a1b2c3d4e5f6g7h8i9j0k1",
    "hvb.a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8",
    "hvs.a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0",
    "dckr_pat_a1b2c3d4e5f6g7h8i9j0k1l2m3n",
    "ya29.a0AfH6SMBxa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5",
    "bot 123456789:AAa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q",
    "ATATT3xFfGF0a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6a1b2c3d4",
    "key-0123456789abcdef0123456789abcdef",
    "https://acme.webhook.office.com/webhookb2/01234567-89ab-cdef-0123-456789abcdef@01234567-89ab-cdef-0123-456789abcdef/IncomingWebhook/0123456789abcdef0123456789abcdef/01234567-89ab-cdef-0123-456789abcdef",
    "https://01234567:01234567@gems.contribsys.com/",
];

/// Real code and config that names a secret without holding one: lookups, parameters, key
/// names, placeholders. A handoff about configuration code must be storable.
const NAMES_A_SECRET: &[&str] = &[
    "password = os.environ[\"DB_PASSWORD\"]",
    "password=request.form[\"password\"]",
    "token = os.getenv(\"GITHUB_TOKEN\")",
    "api_key = os.environ.get(\"OPENAI_API_KEY\", \"\")",
    "secret = settings.SECRET_KEY",
    "const password = process.env.DB_PASSWORD;",
    "let token = env::var(\"API_TOKEN\")?;",
    "password := os.Getenv(\"PGPASSWORD\")",
    "String password = System.getenv(\"DB_PASSWORD\");",
    "$password = $_POST['password'];",
    "password = params[:password]",
    "user.password = hash_password(form.password.data)",
    "def login(username, password):",
    "fn connect(host: &str, password: &str) -> Result<Conn>",
    "function authenticate(token: string): boolean {",
    "async def refresh(self, refresh_token: str) -> str:",
    "password: ${DB_PASSWORD}",
    "api_key: ${{ secrets.API_KEY }}",
    "token: \"{{ vault_token }}\"",
    "DB_PASSWORD=<your-password>",
    "API_TOKEN=<your-token>",
    "SECRET_KEY=changeme",
    "password: \"\"",
    "token = \"\"",
    "\"password\": null,",
    "\"api_key\": \"${API_KEY}\",",
    "client_secret = var.client_secret",
    "password = var.db_password",
    "secret_key_base: <%= ENV[\"SECRET_KEY_BASE\"] %>",
    "password: !vault |",
    "  password: {{ .Values.db.password }}",
    "auth_token = request.headers.get(\"X-Auth-Token\")",
    "password = getpass.getpass()",
    "token = secrets.token_urlsafe(32)",
    "api_key = config[\"api_key\"]",
    "password = cfg.get('database', 'password')",
    "private_key = load_key(path)",
    "access_key = session.get_credentials().access_key",
    "password = args.password",
    "token = self._token",
    "password = kwargs.pop(\"password\", None)",
    "password=\"$DB_PASSWORD\"",
    "export PGPASSWORD=\"$DB_PASSWORD\"",
    "token = read_token_from_file(TOKEN_PATH)",
    "password = input(\"Password: \")",
    "[database]\npassword = \"\"",
    "password_hash = bcrypt.hashpw(password, salt)",
    "secret_name = \"prod/db/password\"",
    "api_key_header = APIKeyHeader(name=\"X-API-Key\")",
    "token_url = \"https://oauth2.googleapis.com/token\"",
    "password_field = forms.CharField(widget=forms.PasswordInput)",
    "if not token: raise AuthError(\"missing token\")",
    "env:\n  - name: DB_PASSWORD\n    valueFrom: secretKeyRef",
    "password = None",
    "token = undefined",
    "apikey = apikey.strip()",
];

#[test]
fn every_provider_token_is_refused() {
    assert_refused(PROVIDERS);
}

#[test]
fn code_that_names_a_secret_is_accepted() {
    assert!(NAMES_A_SECRET.len() >= 50);
    assert_accepted(NAMES_A_SECRET);
}

/// A draft without the envelope fields `write` adds: `write --dry-run` names a credential's line
/// as `verify-handoff` does on the same file, the line the user fixes — not its line after the
/// fields were inserted.
#[test]
fn write_names_a_credentials_line_in_the_users_file() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let draft = canonical(&repo.to_string_lossy(), "main")
        .replace("branch: main\n", "")
        .replace(&format!("checkout: {}\n", repo.display()), "")
        .replace("progress: complete\n", "")
        .replace(
            "### Traps\n- None.",
            "### Traps\n- token ghp_0123456789abcdefghijABCDEFGHIJ012345 leaked.",
        );
    let line = 1 + draft[..draft.find("- token").expect("trap")]
        .matches('\n')
        .count();
    let file = env.write("draft.md", &draft);
    let gate = run(env.verify().arg(&file).arg(&repo));
    let said = format!("ERROR    line {line}: looks like a credential");
    assert!(gate.stderr.contains(&said), "{}", gate.stderr);
    let o = run(env
        .store()
        .args(["write", "--dry-run", "-C"])
        .arg(&repo)
        .arg(&file));
    let all = format!("{}{}", o.stdout, o.stderr);
    assert!(all.contains(&said), "write named another line: {all}");
}
