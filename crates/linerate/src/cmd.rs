//! One module per subcommand: its clap arguments and its `run`.

pub mod agent;
pub mod audit;
pub mod calc;
pub mod client;
pub mod compare;
pub mod completions;
pub mod experiments;
pub mod r#gen;
pub mod history;
pub mod import;
#[cfg(target_os = "linux")]
pub mod lab;
#[cfg(not(target_os = "linux"))]
#[path = "cmd/lab_unsupported.rs"]
pub mod lab;
pub mod lint;
pub mod logdist;
pub mod man;
pub mod nic;
pub mod plausible;
pub mod profile;
pub mod report;
pub mod server;
pub mod show;
pub mod stat;
pub mod tune;
