//! RFC 2544 throughput (frames/s): a run's NDR as its value (the highest load its DUT forwarded
//! without loss, read from the stored `linerate.rfc2544/1` document), no series over time (a
//! search has no reporting intervals), and the columns an RFC 2544 result has.

use linerate_store::RunRecord;
use linerate_store::rfc2544::Rfc2544Run;

use super::Column;
use crate::unit::Unit;

/// NDR, frames/s; `None` when the run's document does not read as an RFC 2544 result.
pub fn value(run: &RunRecord) -> Option<f64> {
    Rfc2544Run::from_record(run).ok().map(|d| d.result.ndr_pps)
}

fn pdr(run: &RunRecord) -> Option<f64> {
    Rfc2544Run::from_record(run).ok().map(|d| d.result.pdr_pps)
}

/// NDR and PDR.
pub const COLUMNS: &[Column] = &[
    Column {
        header: "NDR",
        note: "NDR: the highest load forwarded without loss, frames/s (the headline number).",
        cell: |r| value(r).map(|v| Unit::PacketRate.cell(v)),
    },
    Column {
        header: "PDR",
        note: "PDR: the highest load forwarded within the partial drop ratio, frames/s.",
        cell: |r| pdr(r).map(|v| Unit::PacketRate.cell(v)),
    },
];
