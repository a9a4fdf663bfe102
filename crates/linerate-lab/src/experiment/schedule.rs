//! The order of runs: variants interleaved and repeated (A B C A B C …), so slow drift of the
//! machine (thermal, other load) spreads over every variant instead of biasing one.

/// One run: which repetition of which variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Slot {
    /// 0-based repetition.
    pub repetition: u32,
    /// Index into the experiment's variants.
    pub variant: usize,
}

/// `repetitions` rounds, each running every variant once in order.
pub fn interleaved(variants: usize, repetitions: u32) -> Vec<Slot> {
    (0..repetitions)
        .flat_map(|repetition| {
            (0..variants).map(move |variant| Slot {
                repetition,
                variant,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_run_every_variant_in_order() {
        let s = interleaved(3, 2);
        let order: Vec<(u32, usize)> = s.iter().map(|x| (x.repetition, x.variant)).collect();
        assert_eq!(order, [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]);
        assert!(interleaved(0, 5).is_empty());
    }
}
