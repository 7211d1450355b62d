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
        "# HELP cuzk_device_healthy 1 while the device takes work, 0 while it is quarantined.\n# TYPE cuzk_device_healthy gauge"
    );
    for d in &s.devices {
        let _ = writeln!(
            out,
            "cuzk_device_healthy{{device=\"{}\"}} {}",
            esc(&d.info.id),
            u8::from(d.health == cuzk_engine::Health::Healthy)
        );
    }
    let _ = writeln!(
        out,
        "# HELP cuzk_device_faults_total Device faults (errors, wrong proofs, hangs).\n# TYPE cuzk_device_faults_total counter"
    );
    for d in &s.devices {
        let _ = writeln!(
            out,
            "cuzk_device_faults_total{{device=\"{}\"}} {}",
            esc(&d.info.id),
            d.faults
        );
    }
    let _ = writeln!(
        out,
        "# HELP cuzk_device_memory_budget_bytes Device memory the engine may use.\n# TYPE cuzk_device_memory_budget_bytes gauge"
    );
    for d in &s.devices {
        let _ = writeln!(
            out,
            "cuzk_device_memory_budget_bytes{{device=\"{}\"}} {}",
            esc(&d.info.id),
            d.memory_budget
        );
    }
    let _ = writeln!(
        out,
        "# HELP cuzk_device_memory_free_bytes Device memory free as the driver reports it.\n# TYPE cuzk_device_memory_free_bytes gauge"
    );
    for d in &s.devices {
        if let Some(free) = d.memory_free {
            let _ = writeln!(
                out,
                "cuzk_device_memory_free_bytes{{device=\"{}\"}} {free}",
                esc(&d.info.id)
            );
        }
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

    /// deploy/grafana/cuzk.json queries only metrics this module exports, so the dashboard
    /// never shows an empty panel for a misspelt or renamed metric.
    #[test]
    fn the_grafana_dashboard_queries_only_exported_metrics() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/grafana/cuzk.json");
        let dash: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("dashboard file"))
                .expect("dashboard JSON");
        let mut exprs = Vec::new();
        for p in dash["panels"].as_array().expect("panels") {
            for t in p["targets"].as_array().expect("targets") {
                exprs.push(t["expr"].as_str().expect("expr").to_owned());
            }
        }
        exprs.push(
            dash["templating"]["list"][0]["definition"]
                .as_str()
                .expect("variable query")
                .to_owned(),
        );
        // A status with every family present: a device of each memory kind, a kind with
        // metrics and a queue.
        let mut metrics = std::collections::BTreeMap::new();
        metrics.insert("porep".to_owned(), cuzk_engine::KindMetrics::default());
        let device = |id: &str, free: Option<u64>| cuzk_engine::DeviceStatus {
            info: cuzk_engine::DeviceInfo {
                id: id.into(),
                name: id.into(),
                memory_total: 1,
                ordinal: None,
            },
            busy: std::time::Duration::ZERO,
            busy_last_minute: 0.0,
            activity: Vec::new(),
            current_job: None,
            memory_used: 0,
            memory_budget: 1,
            memory_free: free,
            resident_sources: None,
            health: cuzk_engine::Health::Healthy,
            faults: 0,
            fallback: false,
        };
        let s = EngineStatus {
            devices: vec![device("cpu", None), device("cuda:0000:01:00.0", Some(1))],
            queues: [("porep".to_owned(), (1, 1))].into_iter().collect(),
            host_memory: (1, 2),
            metrics,
            uptime: std::time::Duration::from_secs(1),
        };
        let text = render(&s);
        let exported: std::collections::HashSet<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        let mut queried = 0;
        for e in &exprs {
            let mut rest = e.as_str();
            while let Some(i) = rest.find("cuzk_") {
                let name: String = rest[i..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                rest = &rest[i + name.len()..];
                let family = ["_bucket", "_sum", "_count"]
                    .iter()
                    .find_map(|suffix| name.strip_suffix(suffix))
                    .filter(|f| exported.contains(f))
                    .unwrap_or(&name);
                assert!(
                    exported.contains(family),
                    "the dashboard queries {name}, which is not exported: {e}"
                );
                queried += 1;
            }
        }
        assert!(queried >= 15, "the dashboard queries {queried} metrics");
    }
}
