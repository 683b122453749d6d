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

/// `--slot NAME`: a named slot beside the branch's default one.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SlotArg {
    /// A named slot beside the branch's default one (1–64 letters, digits, `.`, `_`, `-`):
    /// its own file, history, lock and chain.
    #[arg(long, value_name = "NAME")]
    slot: Option<String>,
}

impl SlotArg {
    pub(crate) fn name(&self) -> Option<&str> {
        self.slot.as_deref()
    }

    /// Where an operation works: the checkout `dir`, this slot of its branch.
    pub(crate) fn place(&self, dir: Option<&str>) -> crate::ops::Place {
        crate::ops::Place::of(dir, self.name())
    }

    /// The checkout at `dir` (the one rule: `ops::Place::target`) in this slot, then the store.
    pub(crate) fn target_and_store(
        &self,
        dir: Option<&str>,
    ) -> Result<(crate::store::Target, crate::store::Store), crate::error::Error> {
        self.place(dir).target_and_store()
    }
}
