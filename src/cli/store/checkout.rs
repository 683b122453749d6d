//! The checkout a command works on, named one way on every command: `-C DIR` / `--checkout DIR`
//! (git's `-C`). The positional DIR that `orient`, `path`, `read`, `history`, `restore`, `new`,
//! `status`, `install`, `uninstall` and `trust` took before keeps working, unlisted, for the
//! scripts that use it.

/// `-C DIR` / `--checkout DIR`.
#[derive(Debug, clap::Args)]
pub(crate) struct Checkout {
    /// The checkout to work on (default: $CONTEXT_ECONOMY_CHECKOUT, then the working
    /// directory).
    #[arg(short = 'C', long = "checkout", value_name = "DIR")]
    checkout: Option<String>,
}

impl Checkout {
    pub(crate) fn dir(&self) -> Option<&str> {
        self.checkout.as_deref()
    }
}

/// [`Checkout`], or the older positional DIR.
#[derive(Debug, clap::Args)]
pub(crate) struct CheckoutOrDir {
    #[command(flatten)]
    named: Checkout,
    /// The older spelling of --checkout DIR.
    #[arg(value_name = "DIR", hide = true, conflicts_with = "checkout")]
    dir: Option<String>,
}

impl CheckoutOrDir {
    pub(crate) fn dir(&self) -> Option<&str> {
        self.named.dir().or(self.dir.as_deref())
    }
}
