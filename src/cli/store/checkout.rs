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
    pub(crate) fn of(dir: Option<&str>) -> Checkout {
        Checkout {
            checkout: dir.map(str::to_string),
        }
    }

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
    pub(crate) fn of(slot: Option<&str>) -> SlotArg {
        SlotArg {
            slot: slot.map(str::to_string),
        }
    }

    pub(crate) fn name(&self) -> Option<&str> {
        self.slot.as_deref()
    }

    /// `target`, moved to this slot (a name that cannot be one is a usage error).
    pub(crate) fn apply(
        &self,
        target: crate::store::Target,
    ) -> Result<crate::store::Target, crate::error::Error> {
        target.with_slot(self.name())
    }

    /// The checkout at `dir` (the one rule: `Target::required`) in this slot, then the store —
    /// target problems are reported first (docs/store.md §0 rule 6).
    pub(crate) fn target_and_store(
        &self,
        dir: Option<&str>,
    ) -> Result<(crate::store::Target, crate::store::Store), crate::error::Error> {
        let target = self.apply(crate::store::Target::required(dir)?)?;
        Ok((target, crate::store::Store::open()?))
    }
}
