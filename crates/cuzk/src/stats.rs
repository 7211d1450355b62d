//! Small statistics for benchmarks.

use std::time::Duration;

/// The median of `xs` (the mean of the middle two for an even count); zero when empty.
pub fn median(xs: &[Duration]) -> Duration {
    let mut v = xs.to_vec();
    v.sort();
    match v.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2,
    }
}

/// Seconds with three decimals.
pub fn secs(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let ms = Duration::from_millis;
        assert_eq!(median(&[ms(5), ms(1), ms(3)]), ms(3));
        assert_eq!(
            median(&[ms(4), ms(1), ms(3), ms(2)]),
            Duration::from_micros(2500)
        );
        assert_eq!(median(&[]), Duration::ZERO);
    }
}
