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

/// Peak resident memory of this process so far, bytes (Linux; 0 elsewhere).
pub fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib << 10)
}

/// CPU time this process has used so far, user and system, on every thread (Linux; zero
/// elsewhere). /proc counts it in USER_HZ ticks, 100 a second on every Linux.
pub fn cpu_time() -> Duration {
    let ticks = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the command name, which is in parentheses and may hold spaces.
            let rest = &s[s.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            // utime and stime are fields 14 and 15 of the whole line, 12 and 13 here.
            Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
        })
        .unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// Bytes in GiB.
pub fn gib(b: u64) -> f64 {
    b as f64 / (1u64 << 30) as f64
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

    #[test]
    fn cpu_time_and_peak_rss_are_read_and_grow() {
        // Spins until the process has used 100 ms more CPU: a starved machine only makes
        // this slower, a reader that never grows fails at the deadline.
        let before = cpu_time();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while cpu_time() < before + Duration::from_millis(100) {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            assert!(
                t.elapsed() < Duration::from_secs(120),
                "cpu_time() never grew past {before:?}"
            );
        }
        std::hint::black_box(x);
        let v = vec![1u8; 64 << 20];
        std::hint::black_box(&v);
        assert!(peak_rss() >= 64 << 20);
    }
}
