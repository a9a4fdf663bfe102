//! `linerate`: the command-line front end. It parses arguments, calls the engine crates and
//! renders what they return; no measurement or knowledge lives here.

#![forbid(unsafe_code)]

mod cli;
mod cmd;
mod output;
mod stop;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cli::run(cli) {
        Ok(code) => code,
        Err(err) => output::report_error(&err),
    }
}
