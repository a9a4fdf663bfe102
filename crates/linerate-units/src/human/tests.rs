//! Every form over a grid of values: zero, the 999/1000/1023/1024 boundaries, fractions,
//! rounding that carries into the next prefix, and the largest values the types hold.

use super::*;
use crate::{BitRate, ByteSize, Duration, PacketRate};

fn check<T: Copy>(grid: &[(T, &str)], show: impl Fn(T) -> String) {
    for &(value, want) in grid {
        assert_eq!(show(value), want);
    }
}

#[test]
fn bit_rates_default_to_at_most_two_decimals() {
    check(
        &[
            (0, "0 bit/s"),
            (1, "1 bit/s"),
            (999, "999 bit/s"),
            (1_000, "1 kbit/s"),
            (1_023, "1.02 kbit/s"),
            (1_024, "1.02 kbit/s"),
            (1_500, "1.5 kbit/s"),
            (999_999, "1 Mbit/s"),
            (940_000_000, "940 Mbit/s"),
            (7_619_047_619, "7.62 Gbit/s"),
            (9_410_000_000, "9.41 Gbit/s"),
            (10_000_000_000, "10 Gbit/s"),
            (400_000_000_000, "400 Gbit/s"),
            (1_000_000_000_000, "1 Tbit/s"),
            (u64::MAX, "18446744.07 Tbit/s"),
        ],
        |bps| BitRate::from_bps(bps).human().to_string(),
    );
}

#[test]
fn fixed_decimals_carry_into_the_next_prefix() {
    let fixed = |bps| {
        BitRate::from_bps(bps)
            .human()
            .digits(Digits::Decimals(2))
            .to_string()
    };
    check(
        &[
            (0, "0.00 bit/s"),
            (12, "12.00 bit/s"),
            (999_994, "999.99 kbit/s"),
            (999_996, "1.00 Mbit/s"),
            (400_194_768, "400.19 Mbit/s"),
            (9_400_000_000, "9.40 Gbit/s"),
        ],
        fixed,
    );
}

#[test]
fn significant_digits_read_like_iperf3() {
    let sig3 = |bps| {
        BitRate::from_bps(bps)
            .human()
            .digits(Digits::Significant(3))
            .to_string()
    };
    check(
        &[
            (0, "0.00 bit/s"),
            (9_410_000_000, "9.41 Gbit/s"),
            (1_050_000, "1.05 Mbit/s"),
            (25_800_000_000, "25.8 Gbit/s"),
            (941_000_000, "941 Mbit/s"),
            (9_996_000, "10.0 Mbit/s"),
            (999_600_000, "1.00 Gbit/s"),
        ],
        sig3,
    );
    let sig3_bytes = |n| {
        ByteSize::from_bytes(n)
            .human()
            .family(Family::Binary)
            .digits(Digits::Significant(3))
            .to_string()
    };
    check(
        &[
            (0, "0.00 B"),
            (999, "999 B"),
            (1_023, "1023 B"),
            (1_024, "1.00 KiB"),
            (1_047_552, "1023 KiB"),
            (1_048_064, "1.00 MiB"),
            (1_048_575, "1.00 MiB"),
            (150 << 20, "150 MiB"),
            ((3 << 30) + (1 << 29), "3.50 GiB"),
        ],
        sig3_bytes,
    );
}

#[test]
fn max_significant_trims_what_it_does_not_need() {
    let sig4 = |nanos| {
        Duration::from_nanos(nanos)
            .human()
            .digits(Digits::MaxSignificant(4))
            .to_string()
    };
    check(
        &[
            (0, "0 s"),
            (67, "67 ns"),
            (118, "118 ns"),
            (999, "999 ns"),
            (1_000, "1 µs"),
            (1_040, "1.04 µs"),
            (1_230, "1.23 µs"),
            (12_304, "12.3 µs"),
            (999_400_000, "999.4 ms"),
            (999_999_900, "1 s"),
            (40_000_000, "40 ms"),
            (120_000_000_000, "120 s"),
        ],
        sig4,
    );
}

#[test]
fn float_seconds_below_a_nanosecond() {
    let sig4 = |s| seconds(s).digits(Digits::MaxSignificant(4)).to_string();
    check(
        &[
            (0.0, "0 s"),
            (-1.0, "0 s"),
            (67.2e-9, "67.2 ns"),
            (305.466_666e-9, "305.5 ns"),
            (1.2304e-6, "1.23 µs"),
            (0.04, "40 ms"),
            (12.3456, "12.35 s"),
            (0.5e-9, "0.5 ns"),
        ],
        sig4,
    );
    assert_eq!(seconds(67.2e-9).exact().to_string(), "67.2 ns");
}

#[test]
fn sizes_choose_the_family_a_reader_expects() {
    let auto = |n| ByteSize::from_bytes(n).human().exact().to_string();
    check(
        &[
            (0, "0 B"),
            (999, "999 B"),
            (1_000, "1 kB"),
            (1_001, "1.001 kB"),
            (1_023, "1.023 kB"),
            (1_024, "1 KiB"),
            (1_500, "1.5 kB"),
            (1_536, "1.5 KiB"),
            (128_000, "128 kB"),
            (131_072, "128 KiB"),
            (1_024_000, "1000 KiB"),
            (16_000_000, "16 MB"),
            (16 << 20, "16 MiB"),
            (10_000_000_000, "10 GB"),
            (10_240_000_000, "10.24 GB"),
            (10_000_000_001, "10.000000001 GB"),
            (125_000_000_000_000, "125 TB"),
            (1 << 40, "1 TiB"),
            (u64::MAX, "18446744.073709551615 TB"),
        ],
        auto,
    );
    // The family holds for rounded forms too, unless one is chosen.
    let two = |n| ByteSize::from_bytes(n).human().to_string();
    check(
        &[
            (5_000_000, "5 MB"),
            (8_388_480, "8.39 MB"),
            (150_077_440, "143.12 MiB"),
        ],
        two,
    );
    let si = ByteSize::from_bytes(150_077_440)
        .human()
        .family(Family::Si)
        .digits(Digits::Decimals(2));
    assert_eq!(si.to_string(), "150.08 MB");
    let binary = ByteSize::from_bytes(8_388_480)
        .human()
        .family(Family::Binary)
        .digits(Digits::Decimals(2));
    assert_eq!(binary.to_string(), "8.00 MiB");
}

#[test]
fn display_uses_the_same_rule() {
    assert_eq!(ByteSize::from_bytes(10_000_000_000).to_string(), "10 GB");
    assert_eq!(ByteSize::from_kib(64).to_string(), "64 KiB");
    assert_eq!(format!("{:.1}", ByteSize::from_bytes(5_000_000)), "4.8 MiB");
    assert_eq!(format!("{:.1}", ByteSize::from_bytes(1_000)), "1.0 kB");
    assert_eq!(Duration::from_micros(250).to_string(), "250 us");
    assert_eq!(Duration::from_micros(250).human().to_string(), "250 µs");
}

#[test]
fn counts_stay_whole_until_a_prefix_scales_them() {
    let column = |pps| {
        PacketRate::from_pps(pps)
            .human()
            .digits(Digits::Decimals(2))
            .whole_when_unscaled()
            .to_string()
    };
    check(
        &[
            (0.0, "0 pps"),
            (3.0, "3 pps"),
            (3.4, "3 pps"),
            (999.4, "999 pps"),
            (999.6, "1.00 kpps"),
            (1_200.0, "1.20 kpps"),
            (14_880_952.38, "14.88 Mpps"),
            (1.0e10, "10.00 Gpps"),
        ],
        column,
    );
    let compact = |pps| {
        PacketRate::from_pps(pps)
            .human()
            .digits(Digits::Decimals(2))
            .whole_when_unscaled()
            .compact()
            .to_string()
    };
    check(
        &[(700.0, "700"), (1_200.0, "1.20k"), (1.0e10, "10.00G")],
        compact,
    );
}

#[test]
fn packet_rates_exact_and_rounded() {
    let r = PacketRate::from_pps(1_488_095.238);
    assert_eq!(r.human().exact().to_string(), "1.488095238 Mpps");
    assert_eq!(r.human().to_string(), "1.49 Mpps");
    assert_eq!(
        PacketRate::from_pps(1_250_000.0).human().to_string(),
        "1.25 Mpps"
    );
    assert_eq!(PacketRate::from_pps(0.5).human().to_string(), "0.5 pps");
    assert_eq!(
        PacketRate::from_pps(f64::INFINITY).human().to_string(),
        "inf pps"
    );
    let kpps = PacketRate::from_pps(81_274.3)
        .human()
        .prefix(Prefix::Kilo)
        .digits(Digits::Decimals(1));
    assert_eq!(kpps.to_string(), "81.3 kpps");
    let small = PacketRate::from_pps(12.0)
        .human()
        .prefix(Prefix::Kilo)
        .digits(Digits::Decimals(1));
    assert_eq!(small.to_string(), "0.0 kpps");
}

#[test]
fn bytes_per_second_and_capped_prefixes() {
    let bus = |mbps| BitRate::from_mbps(mbps).human_bytes_per_sec().to_string();
    check(
        &[
            (2_112, "264 MB/s"),
            (8_512, "1.06 GB/s"),
            (128_000, "16 GB/s"),
        ],
        bus,
    );
    let capped = BitRate::from_mbps(8_512)
        .human_bytes_per_sec()
        .at_most(Prefix::Mega);
    assert_eq!(capped.to_string(), "1064 MB/s");
    assert_eq!(
        BitRate::from_bps(1)
            .human_bytes_per_sec()
            .exact()
            .to_string(),
        "0.125 B/s"
    );
}

#[test]
fn exact_forms_in_the_base_unit() {
    let r = BitRate::from_gbps(10).human().exact().prefix(Prefix::One);
    assert_eq!(r.to_string(), "10000000000 bit/s");
    assert_eq!(r.grouped().to_string(), "10,000,000,000 bit/s");
    let b = ByteSize::from_bytes(5_000_000)
        .human()
        .exact()
        .prefix(Prefix::One)
        .grouped();
    assert_eq!(b.to_string(), "5,000,000 B");
    // A prefix the unit does not use is ignored rather than printed wrongly.
    let odd = BitRate::from_gbps(1).human().prefix(Prefix::Kibi);
    assert_eq!(odd.to_string(), "1 Gbit/s");
    let no_milli = ByteSize::from_bytes(10_000_000_000)
        .human()
        .prefix(Prefix::Milli);
    assert_eq!(no_milli.to_string(), "10 GB");
    // On a size, the prefix asked for chooses the family.
    let gib = ByteSize::from_bytes(10_000_000_000)
        .human()
        .prefix(Prefix::Gibi);
    assert_eq!(gib.to_string(), "9.31 GiB");
    let kb = ByteSize::from_kib(64).human().at_most(Prefix::Kilo);
    assert_eq!(kb.to_string(), "65.54 kB");
}

#[test]
fn width_alignment_and_precision_are_honoured() {
    let r = BitRate::from_mbps(9_410).human();
    assert_eq!(format!("{r:>13}"), "  9.41 Gbit/s");
    assert_eq!(format!("{r:<13}|"), "9.41 Gbit/s  |");
    assert_eq!(format!("{r:.1}"), "9.4 Gbit/s");
}

#[test]
fn plain_numbers() {
    assert_eq!(grouped(0), "0");
    assert_eq!(grouped(999), "999");
    assert_eq!(grouped(1_000), "1,000");
    assert_eq!(grouped(14_880_952), "14,880,952");
    assert_eq!(grouped(u64::MAX), "18,446,744,073,709,551,615");
    assert_eq!(number(340.333_333, Digits::Max(2)), "340.33");
    assert_eq!(number(64.0, Digits::Max(2)), "64");
    assert_eq!(number(0.5, Digits::Exact), "0.5");
    assert_eq!(number(-1234.5, Digits::Decimals(1)), "-1234.5");
    assert_eq!(number::group_integer_part("-1234.5"), "-1,234.5");
}

#[test]
fn axes_scale_to_the_largest_value() {
    assert_eq!(bit_rate_axis(9.4e9), (1e9, "Gbit/s"));
    assert_eq!(bit_rate_axis(12.0), (1.0, "bit/s"));
    assert_eq!(bit_rate_axis(0.0), (1.0, "bit/s"));
    assert_eq!(bit_rate_axis(2e12), (1e12, "Tbit/s"));
    assert_eq!(bit_rate_axis(f64::NAN), (1.0, "bit/s"));
    assert_eq!(Prefix::largest_si(999.0), Prefix::One);
    assert_eq!(Prefix::largest_si(1000.0), Prefix::Kilo);
}

#[test]
fn the_crate_docs_examples_of_the_size_rule() {
    let auto = |n| ByteSize::from_bytes(n).to_string();
    assert_eq!(auto(614_400_000_000), "614.4 GB");
    assert_eq!(auto(2_684_354_560), "2.5 GiB");
    assert_eq!(auto(9_765_625 * 1024), "10 GB");
}
