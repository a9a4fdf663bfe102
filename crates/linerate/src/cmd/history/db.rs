//! The database options every store command shares (and `linerate client` uses to store runs).

use std::path::PathBuf;

use anyhow::Context;
use linerate_store::Store;

/// Where the results database is.
#[derive(Debug, Clone, clap::Args)]
pub struct DbArgs {
    /// The results database [default: $XDG_DATA_HOME/linerate/linerate.db, else
    /// ~/.local/share/linerate/linerate.db]
    #[arg(long, value_name = "PATH", env = "LINERATE_DB")]
    pub db: Option<PathBuf>,
}

impl DbArgs {
    /// The database file these options name.
    pub fn path(&self) -> anyhow::Result<PathBuf> {
        match &self.db {
            Some(p) => Ok(p.clone()),
            None => Ok(Store::default_path()?),
        }
    }

    /// Opens (creating and migrating if needed) the database.
    pub fn open(&self) -> anyhow::Result<Store> {
        let path = self.path()?;
        Store::open(&path).context("cannot open the results database")
    }
}

/// The store options of a measuring command: where to store, or not at all.
#[derive(Debug, Clone, clap::Args)]
#[allow(dead_code)] // used by `linerate client` once the traffic engine lands
pub struct StoreRunArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Do not store this run in the results database
    #[arg(long)]
    pub no_store: bool,
}
