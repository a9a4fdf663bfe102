//! Statistics for measurements: descriptive statistics, Student's t with exact quantiles,
//! ministat-compatible comparison and rendering, distributions and rank tests.

pub mod distribution;
pub mod ks;
