//! The statistics `cargo bench --bench locomo` reports a change with: the
//! two-sided normal tail for a two-proportion z-test, and Holm–Bonferroni
//! across categories.

/// Holm–Bonferroni adjusted p-values, in the order given.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|i, j| p[*i].total_cmp(&p[*j]));
    let mut adjusted = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// The complementary error function (Abramowitz and Stegun 7.1.26,
/// error under 1.5e-7): enough for a p-value.
pub fn erfc(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    poly * (-x * x).exp()
}
