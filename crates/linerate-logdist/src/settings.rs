//! `linerate logdist`'s settings checked and turned into the engine's terms: the histogram
//! (bin width, number of bins, threshold), the filters, the parsing threads, the comparison's
//! significance level.

use linerate_units::Duration;

use crate::filter::{self, Filters};
use crate::format::Format;

/// The most bins `--max` / `--bin` may make.
pub const MAX_BINS: u64 = 100_000;

/// The most parsing threads.
pub const MAX_THREADS: usize = 64;

/// A setting that cannot be used, named by its flag.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// `--bin 0`.
    #[error("--bin {0}: the bin width must be above zero")]
    ZeroBin(Duration),
    /// `--max` below `--bin`.
    #[error("--max {max} is below --bin {bin}")]
    MaxBelowBin {
        /// `--max`.
        max: Duration,
        /// `--bin`.
        bin: Duration,
    },
    /// Too many bins.
    #[error("--max {max} / --bin {bin} makes {bins} bins; at most {MAX_BINS}")]
    TooManyBins {
        /// `--max`.
        max: Duration,
        /// `--bin`.
        bin: Duration,
        /// How many it makes.
        bins: u64,
    },
    /// A confidence that is no percentage.
    #[error("--confidence {0}: give a percentage between 0 and 100")]
    Confidence(f64),
    /// `--regex` with a format that has its own grammar.
    #[error("--regex goes with --input-format regex (or auto), not {0}")]
    RegexFormat(&'static str),
    /// `--path-regex` that does not compile.
    #[error("--path-regex")]
    PathRegex(#[source] regex::Error),
    /// `--status` that does not parse.
    #[error("{0}")]
    Status(String),
    /// `--threads 0`.
    #[error("--threads 0: give at least 1")]
    NoThreads,
}

/// The histogram: bin width and bins in ns up to `max`, and the threshold (default: one bin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Histogram {
    /// Bin width, ns.
    pub bin_ns: u64,
    /// Bins up to `--max`.
    pub bins: usize,
    /// The share under this time is reported, ns.
    pub threshold_ns: u64,
}

impl Histogram {
    /// `--bin`, `--max` and `--threshold`.
    ///
    /// # Errors
    /// A zero bin, `max` below `bin`, or more than [`MAX_BINS`] bins.
    pub fn new(
        bin: Duration,
        max: Duration,
        threshold: Option<Duration>,
    ) -> Result<Self, SettingsError> {
        let bin_ns = bin.as_nanos();
        if bin_ns == 0 {
            return Err(SettingsError::ZeroBin(bin));
        }
        let max_ns = max.as_nanos();
        if max_ns < bin_ns {
            return Err(SettingsError::MaxBelowBin { max, bin });
        }
        let bins = max_ns.div_ceil(bin_ns);
        if bins > MAX_BINS {
            return Err(SettingsError::TooManyBins { max, bin, bins });
        }
        Ok(Self {
            bin_ns,
            bins: usize::try_from(bins).unwrap_or(MAX_BINS as usize),
            threshold_ns: threshold.map_or(bin_ns, Duration::as_nanos),
        })
    }
}

/// The significance level of a comparison at `confidence` percent.
///
/// # Errors
/// A confidence outside (0, 100).
pub fn significance(confidence: f64) -> Result<f64, SettingsError> {
    if !(confidence > 0.0 && confidence < 100.0) {
        return Err(SettingsError::Confidence(confidence));
    }
    Ok(1.0 - confidence / 100.0)
}

/// Refuses `--regex` with a format other than `regex` or `auto`.
///
/// # Errors
/// As said.
pub fn check_regex(format: Format, regex: bool) -> Result<(), SettingsError> {
    if regex && !matches!(format, Format::Auto | Format::Regex) {
        return Err(SettingsError::RegexFormat(format.name()));
    }
    Ok(())
}

/// The filters from `--status`, `--method`, `--path-regex`, `--since` and `--until`.
///
/// # Errors
/// A status list or path regex that does not parse.
pub fn filters(
    status: Option<&str>,
    methods: &[String],
    path_regex: Option<&str>,
    since: Option<i64>,
    until: Option<i64>,
) -> Result<Filters, SettingsError> {
    Ok(Filters {
        statuses: match status {
            Some(list) => filter::parse_statuses(list).map_err(SettingsError::Status)?,
            None => Vec::new(),
        },
        methods: methods.iter().map(|m| m.as_bytes().to_vec()).collect(),
        path: path_regex
            .map(filter::path_regex)
            .transpose()
            .map_err(SettingsError::PathRegex)?,
        since,
        until,
    })
}

/// Parsing threads: as asked (at most [`MAX_THREADS`]), else the CPUs available, at most 8.
///
/// # Errors
/// Zero threads.
pub fn threads(asked: Option<usize>) -> Result<usize, SettingsError> {
    match asked {
        Some(0) => Err(SettingsError::NoThreads),
        Some(n) => Ok(n.min(MAX_THREADS)),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get().min(8))),
    }
}

/// `--unit`: nanoseconds per unit of a bare number (s, ms, us or µs, ns).
///
/// # Errors
/// Another unit.
pub fn parse_unit(s: &str) -> Result<u64, String> {
    match s {
        "s" => Ok(1_000_000_000),
        "ms" => Ok(1_000_000),
        "us" | "µs" => Ok(1_000),
        "ns" => Ok(1),
        _ => Err(format!("--unit {s:?}: use s, ms, us or ns")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_is_checked() {
        let ms = Duration::from_millis;
        let h = Histogram::new(ms(100), ms(6000), None).unwrap();
        assert_eq!(
            (h.bin_ns, h.bins, h.threshold_ns),
            (100_000_000, 60, 100_000_000)
        );
        assert!(matches!(
            Histogram::new(ms(0), ms(10), None),
            Err(SettingsError::ZeroBin(_))
        ));
        assert!(matches!(
            Histogram::new(ms(10), ms(5), None),
            Err(SettingsError::MaxBelowBin { .. })
        ));
        let err = Histogram::new(Duration::from_nanos(1), ms(1), None).unwrap_err();
        assert!(err.to_string().contains("makes 1000000 bins"), "{err}");
    }

    #[test]
    fn settings_name_their_flag() {
        assert_eq!(parse_unit("ms"), Ok(1_000_000));
        assert!(parse_unit("h").unwrap_err().contains("--unit"));
        assert!(significance(100.0).is_err());
        assert!((significance(95.0).unwrap() - 0.05).abs() < 1e-12);
        assert!(check_regex(Format::Nginx, true).is_err());
        assert!(check_regex(Format::Auto, true).is_ok());
        assert!(matches!(threads(Some(0)), Err(SettingsError::NoThreads)));
        assert_eq!(threads(Some(500)).unwrap(), MAX_THREADS);
    }
}
