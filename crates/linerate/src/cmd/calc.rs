//! `linerate calc`: the ceiling of a link, a bus or a path, computed before measuring anything.
//! The arithmetic lives in `linerate-calc`; this module parses flags and renders its results.

mod bdp;
mod bus;
pub(crate) mod format;
mod rate;
mod tunnel;

use std::process::ExitCode;

use linerate_units::BitRate;

/// Arguments of `linerate calc`.
#[derive(Debug, clap::Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  linerate calc rate --link 10G\n",
    "  linerate calc bus --pcie gen3x8 --nics 2x10G\n",
    "  linerate calc bdp --rate 1G --rtt 80ms\n",
    "  linerate calc tunnel --encap pppoe,wireguard --link 1G",
))]
pub struct Args {
    #[command(subcommand)]
    command: CalcCommand,
}

/// The output flag every calc subcommand takes.
#[derive(Debug, clap::Args)]
struct OutputArgs {
    /// Print the result as JSON (schema `linerate.calc.<subcommand>/1`).
    #[arg(
        long,
        help = "Print the result as JSON (schema \"linerate.calc.<subcommand>/1\")"
    )]
    json: bool,
}

#[derive(Debug, clap::Subcommand)]
enum CalcCommand {
    /// Frames/s and bit rates at L1, L2 and L3 per frame size (RFC 2544 sizes and IMIX by default)
    Rate(rate::Args),
    /// PCI, PCI-X or PCIe bandwidth, and whether the bus carries its NICs at line rate
    Bus(bus::Args),
    /// Bandwidth-delay product, window scaling, Linux buffers, Mathis and RFC 6349 bounds
    Bdp(bdp::Args),
    /// Inner MTU, TCP MSS and efficiency through a stack of tunnels and encapsulations
    Tunnel(tunnel::Args),
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        CalcCommand::Rate(a) => rate::run(&a),
        CalcCommand::Bus(a) => bus::run(&a),
        CalcCommand::Bdp(a) => bdp::run(&a),
        CalcCommand::Tunnel(a) => tunnel::run(&a),
    }?;
    Ok(ExitCode::SUCCESS)
}

/// A result with its schema name, as `--json` prints it.
#[derive(serde::Serialize)]
struct Versioned<'a, T: serde::Serialize> {
    schema: &'static str,
    #[serde(flatten)]
    result: &'a T,
}

fn print_json<T: serde::Serialize>(schema: &'static str, result: &T) -> anyhow::Result<()> {
    crate::output::print_json(&Versioned { schema, result })
}

/// A bit rate above zero (a link of 0 bit/s carries nothing to compute).
pub(crate) fn positive_rate(s: &str) -> Result<BitRate, String> {
    let rate = BitRate::parse_with_unit(s).map_err(|e| format!("{e}"))?;
    if rate == BitRate::ZERO {
        return Err("the rate must be above zero".into());
    }
    Ok(rate)
}
