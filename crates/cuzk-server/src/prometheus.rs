//! The engine's status as Prometheus text exposition (format 0.0.4).

use std::fmt::Write;

use cuzk_engine::{EngineStatus, Histogram, LATENCY_BUCKETS};

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn histogram(out: &mut String, name: &str, kind: &str, h: &Histogram) {
    // The engine's buckets are already cumulative (each counts observations <= its bound);
    // an empty histogram has no buckets yet.
    for (i, le) in LATENCY_BUCKETS.iter().enumerate() {
        let n = h.buckets.get(i).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "{name}_bucket{{kind=\"{}\",le=\"{le}\"}} {n}",
            esc(kind)
        );
    }
    let _ = writeln!(
        out,
        "{name}_bucket{{kind=\"{}\",le=\"+Inf\"}} {}",
        esc(kind),
        h.count
    );
    let _ = writeln!(out, "{name}_sum{{kind=\"{}\"}} {}", esc(kind), h.sum);
    let _ = writeln!(out, "{name}_count{{kind=\"{}\"}} {}", esc(kind), h.count);
}

/// Renders `s`.
pub fn render(s: &EngineStatus) -> String {
    let mut out = String::new();
    let counters = [
        (
            "cuzk_proofs_completed_total",
            "Proofs completed and verified.",
        ),
        ("cuzk_proofs_failed_total", "Proofs that failed."),
        (
            "cuzk_proofs_cancelled_total",
            "Proofs cancelled (by clients, at shutdown, or abandoned).",
        ),
        (
            "cuzk_proofs_abandoned_total",
            "Proofs cancelled because every caller waiting for them gave up.",
        ),
        (
            "cuzk_partition_retries_total",
            "Partitions retried on another device.",
        ),
    ];
    for (i, (name, help)) in counters.iter().enumerate() {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
        for (kind, m) in &s.metrics {
            let v = [m.completed, m.failed, m.cancelled, m.abandoned, m.retries][i];
            let _ = writeln!(out, "{name}{{kind=\"{}\"}} {v}", esc(kind));
        }
    }
    type Pick = fn(&cuzk_engine::KindMetrics) -> &Histogram;
    let hists: [(&str, &str, Pick); 5] = [
        ("cuzk_job_seconds", "Submit to result.", |m| &m.total),
        (
            "cuzk_queue_wait_seconds",
            "Submit to first synthesis.",
            |m| &m.queue_wait,
        ),
        ("cuzk_synthesis_seconds", "Synthesis per partition.", |m| {
            &m.synthesis
        }),
        (
            "cuzk_device_wait_seconds",
            "Per partition, from synthesized to started on a device.",
            |m| &m.device_wait,
        ),
        ("cuzk_device_seconds", "Device time per partition.", |m| {
            &m.device
        }),
    ];
    for (name, help, get) in hists {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        for (kind, m) in &s.metrics {
            histogram(&mut out, name, kind, get(m));
        }
    }
    let _ = writeln!(
        out,
        "# HELP cuzk_queue_jobs Jobs per kind and state.\n# TYPE cuzk_queue_jobs gauge"
    );
    let mut kinds: Vec<_> = s.queues.iter().collect();
    kinds.sort();
    for (kind, (pending, running)) in kinds {
        let _ = writeln!(
            out,
            "cuzk_queue_jobs{{kind=\"{}\",state=\"pending\"}} {pending}",
            esc(kind)
        );
        let _ = writeln!(
            out,
            "cuzk_queue_jobs{{kind=\"{}\",state=\"running\"}} {running}",
            esc(kind)
        );
    }
    let _ = writeln!(
        out,
        "# HELP cuzk_device_busy_seconds_total Time a worker held the device.\n# TYPE cuzk_device_busy_seconds_total counter"
    );
    for d in &s.devices {
        let _ = writeln!(
            out,
            "cuzk_device_busy_seconds_total{{device=\"{}\"}} {}",
            esc(&d.info.id),
            d.busy.as_secs_f64()
        );
    }
    let _ = writeln!(
        out,
        "# HELP cuzk_device_memory_reserved_bytes Device memory reserved by running work.\n# TYPE cuzk_device_memory_reserved_bytes gauge"
    );
    for d in &s.devices {
        let _ = writeln!(
            out,
            "cuzk_device_memory_reserved_bytes{{device=\"{}\"}} {}",
            esc(&d.info.id),
            d.memory_used
        );
    }
    let _ = writeln!(
        out,
        "# HELP cuzk_host_memory_bytes Host budget in use and in total.\n# TYPE cuzk_host_memory_bytes gauge\ncuzk_host_memory_bytes{{state=\"used\"}} {}\ncuzk_host_memory_bytes{{state=\"total\"}} {}",
        s.host_memory.0, s.host_memory.1
    );
    let _ = writeln!(
        out,
        "# HELP cuzk_uptime_seconds Seconds since the engine started.\n# TYPE cuzk_uptime_seconds gauge\ncuzk_uptime_seconds {}",
        s.uptime.as_secs_f64()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sample line is `name{labels} value` with a valid metric name and a number, and
    /// every family has HELP and TYPE lines: what a Prometheus scraper requires.
    #[test]
    fn renders_valid_exposition_text() {
        let mut metrics = std::collections::BTreeMap::new();
        let mut m = cuzk_engine::KindMetrics {
            completed: 3,
            ..Default::default()
        };
        m.total.buckets = vec![1; LATENCY_BUCKETS.len()];
        m.total.count = 1;
        m.total.sum = 0.5;
        metrics.insert("winning-post".to_owned(), m);
        let s = EngineStatus {
            devices: Vec::new(),
            queues: [("porep".to_owned(), (2, 1))].into_iter().collect(),
            host_memory: (1, 2),
            metrics,
            uptime: std::time::Duration::from_secs(5),
        };
        let text = render(&s);
        let mut typed = std::collections::HashSet::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                typed.insert(rest.split_whitespace().next().unwrap().to_owned());
                continue;
            }
            if line.starts_with('#') {
                continue;
            }
            let (series, value) = line.rsplit_once(' ').expect("name and value");
            assert!(value.parse::<f64>().is_ok(), "{line}");
            let name = series.split('{').next().unwrap();
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
                    && !name.starts_with(|c: char| c.is_ascii_digit()),
                "{line}"
            );
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| name.strip_suffix(s).filter(|f| typed.contains(*f)))
                .unwrap_or(name);
            assert!(typed.contains(family), "no TYPE for {line}");
            if let Some(labels) = series.strip_prefix(name) {
                if !labels.is_empty() {
                    assert!(labels.starts_with('{') && labels.ends_with('}'), "{line}");
                }
            }
        }
        assert!(text.contains("cuzk_proofs_completed_total{kind=\"winning-post\"} 3"));
        assert!(text.contains("cuzk_job_seconds_bucket{kind=\"winning-post\",le=\"+Inf\"} 1"));
        assert!(text.contains("cuzk_queue_jobs{kind=\"porep\",state=\"pending\"} 2"));
    }
}
