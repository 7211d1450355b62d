//! `cuzk config from-curio FILE`: a Curio `cuzk.toml` (the config of the cuzk daemon that
//! ships inside Curio) turned into this daemon's configuration.
//!
//! What means the same here is carried over; every other key of the file appears as a
//! comment saying why it was not. Defaults that differ are made explicit where an operator
//! would notice the difference (Curio's socket path and parameter directory). The output is
//! checked by parsing and validating it as a [`Config`] before it is printed.

use std::collections::BTreeMap;
use std::path::PathBuf;

use cuzk_server::access::Cidr;
use cuzk_server::config::Config;
use toml::Value;

use crate::CliError;

/// Arguments of `cuzk config from-curio`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Curio cuzk.toml to convert (Curio's daemon reads /data/zk/cuzk.toml by default).
    file: PathBuf,
    /// Networks (CIDR) whose clients need no token, for a TCP listener beyond loopback.
    /// Curio's client sends none; without this flag such a listener trusts every network,
    /// as Curio's daemon did, and the output says so.
    #[arg(long = "allow", value_name = "CIDR")]
    allow: Vec<String>,
    /// Write the result here instead of standard output.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Curio's defaults where ours differ and the difference matters to its clients.
const CURIO_LISTEN: &str = "unix:///run/curio/cuzk.sock";
const CURIO_PARAM_CACHE: &str = "/data/zk/params";

/// Our sections, in output order.
const SECTIONS: [&str; 6] = ["server", "http", "engine", "params", "devices", "log"];

/// The converted file: lines per section of ours.
#[derive(Default)]
struct Out {
    sections: BTreeMap<&'static str, Vec<String>>,
}

impl Out {
    fn set(&mut self, section: &'static str, key: &str, v: Value) {
        self.push(section, format!("{key} = {v}"));
    }
    fn comment(&mut self, section: &'static str, text: &str) {
        for l in text.lines() {
            self.push(section, format!("# {l}"));
        }
    }
    /// A Curio key that is not carried over, shown with its value and the reason.
    fn skip(&mut self, section: &'static str, curio_key: &str, v: &Value, why: &str) {
        self.comment(
            section,
            &format!("Curio {curio_key} = {v}: not carried over. {why}"),
        );
    }
    fn push(&mut self, section: &'static str, line: String) {
        self.sections.entry(section).or_default().push(line);
    }
    fn text(&self, source: &str) -> String {
        let mut s = format!(
            "# cuzk daemon configuration, converted from Curio's {source} by\n\
             # `cuzk config from-curio`. Every key is documented in docs/CONFIG.md; the Curio\n\
             # keys that mean nothing here are kept as comments with the reason.\n"
        );
        for name in SECTIONS {
            if let Some(lines) = self.sections.get(name) {
                s.push_str(&format!("\n[{name}]\n"));
                for l in lines {
                    s.push_str(l);
                    s.push('\n');
                }
            }
        }
        s
    }
}

fn string(v: &Value) -> Option<&str> {
    v.as_str()
}

/// "256GiB", "512MiB", "64GB", "100MB", "12345" -> bytes.
pub(crate) fn bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: u64 = n.parse().ok()?;
    let m: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        _ => return None,
    };
    n.checked_mul(m)
}

fn is_remote_tcp(listen: &str) -> bool {
    !listen.starts_with("unix:")
        && listen
            .parse::<std::net::SocketAddr>()
            .is_ok_and(|a| !a.ip().is_loopback())
}

/// Converts a parsed Curio config; `allow` are the trusted networks for a remote listener,
/// `cuda` whether this binary has the CUDA backend.
fn convert(curio: &toml::Table, allow: &[Cidr], cuda: bool) -> Result<Out, String> {
    let mut out = Out::default();
    let get = |section: &str, key: &str| curio.get(section).and_then(|s| s.get(key));

    // [daemon]
    let listen = get("daemon", "listen")
        .and_then(string)
        .unwrap_or(CURIO_LISTEN)
        .to_owned();
    if get("daemon", "listen").is_none() {
        out.comment(
            "server",
            "Curio's default socket, so Curio's Cuzk.Address keeps working.",
        );
    }
    out.set("server", "listen", Value::String(listen.clone()));
    if is_remote_tcp(&listen) {
        if allow.is_empty() {
            return Err(format!(
                "Curio's daemon listens on {listen}, beyond loopback, and serves every peer \
                 without a token; cuzk opens to no network silently: convert again with \
                 --allow CIDR (repeatable: the networks of your Curio hosts), or listen on \
                 loopback or a unix socket"
            ));
        }
        let nets: Vec<String> = {
            out.comment(
                "server",
                "Curio's client sends no token: these networks may call without one.",
            );
            allow.iter().map(Cidr::to_string).collect()
        };
        out.set(
            "server",
            "allow_unauthenticated_from",
            Value::Array(nets.into_iter().map(Value::String).collect()),
        );
    }
    if let Some(v) = get("daemon", "status_listen") {
        match string(v).map(str::trim) {
            Some("") => {}
            Some(a) => {
                out.comment(
                    "http",
                    "Curio's status_listen. The JSON at /status has cuzk's own shape; /metrics\n\
                     and a status page are served beside it.",
                );
                out.set("http", "listen", Value::String(a.to_owned()));
                if is_remote_tcp(a) {
                    out.comment("http", "Curio served its status to every network.");
                    out.set("http", "allow_remote", Value::Boolean(true));
                }
            }
            None => out.skip("http", "daemon.status_listen", v, "It is not a string."),
        }
    }

    // [srs]
    let params = get("srs", "param_cache")
        .and_then(string)
        .unwrap_or(CURIO_PARAM_CACHE);
    out.set("params", "dir", Value::String(params.to_owned()));
    if let Some(v) = get("srs", "preload") {
        out.skip(
            "params",
            "srs.preload",
            v,
            "Curio ignores it. cuzk honours params.preload (parameters loaded at start);\n\
             to keep Curio's behaviour it stays off.",
        );
    }

    // [memory]
    if let Some(v) = get("memory", "total_budget") {
        match string(v).map(str::trim) {
            Some("auto") => out.set("engine", "host_memory", Value::String("auto".into())),
            Some(s) => match bytes(s) {
                Some(b) => {
                    out.comment("engine", &format!("Curio total_budget = {s:?}."));
                    out.set("engine", "host_memory", Value::String(b.to_string()));
                }
                None => out.skip("engine", "memory.total_budget", v, "Not a size cuzk reads."),
            },
            None => out.skip("engine", "memory.total_budget", v, "It is not a string."),
        }
    }
    if let Some(v) = get("memory", "safety_margin") {
        out.skip(
            "engine",
            "memory.safety_margin",
            v,
            "cuzk's \"auto\" budget keeps 2 GiB free; for another margin set host_memory to\n\
             a number of bytes.",
        );
    }
    for (key, why) in [
        (
            "eviction_min_idle",
            "cuzk evicts parameters and PCEs not in use when memory is needed, without an idle time.",
        ),
        ("pinned_budget", "Deprecated and ignored by Curio."),
        ("working_memory_budget", "Deprecated and ignored by Curio."),
    ] {
        if let Some(v) = get("memory", key) {
            out.skip("engine", &format!("memory.{key}"), v, why);
        }
    }

    // [gpus]
    if cuda {
        out.set("devices", "backend", Value::String("cuda".into()));
    } else {
        out.comment(
            "devices",
            "This cuzk binary has no CUDA backend (built without the cuda feature).",
        );
        out.set("devices", "backend", Value::String("cpu".into()));
    }
    if let Some(v) = get("gpus", "devices") {
        let ords: Option<Vec<Value>> = v.as_array().map(|a| {
            a.iter()
                .filter_map(Value::as_integer)
                .map(|n| Value::String(n.to_string()))
                .collect()
        });
        match ords {
            Some(o) if o.is_empty() => {}
            Some(o) if cuda => {
                out.comment(
                    "devices",
                    "Curio numbered GPUs as nvidia-smi does. Here a number is a CUDA ordinal,\n\
                     which can differ; prefer PCI bus ids (nvidia-smi --query-gpu=index,pci.bus_id).",
                );
                out.set("devices", "cuda", Value::Array(o));
            }
            _ => out.skip(
                "devices",
                "gpus.devices",
                v,
                "Without the CUDA backend there are no GPUs to choose.",
            ),
        }
    }
    if let Some(v) = get("gpus", "gpu_workers_per_device") {
        match v.as_integer() {
            Some(n) if n >= 1 => out.set("engine", "workers_per_device", Value::Integer(n)),
            _ => out.skip(
                "engine",
                "gpus.gpu_workers_per_device",
                v,
                "cuzk needs at least 1.",
            ),
        }
    }
    if let Some(v) = get("gpus", "gpu_threads") {
        out.skip(
            "engine",
            "gpus.gpu_threads",
            v,
            "cuzk sizes the host side of GPU work from the CPU cores.",
        );
    }

    // [scheduler], [synthesis], [pipeline]
    for key in ["max_batch_size", "max_batch_wait_ms", "sort_by_type"] {
        if let Some(v) = get("scheduler", key) {
            out.skip(
                "engine",
                &format!("scheduler.{key}"),
                v,
                "cuzk does not batch proofs; it orders work by priority, and partitions of\n\
                 different proofs share the devices.",
            );
        }
    }
    if let Some(v) = get("synthesis", "threads") {
        out.skip(
            "engine",
            "synthesis.threads",
            v,
            "cuzk's synthesis pools use every core; engine.synthesis_threads is the number of\n\
             partitions synthesized at once.",
        );
    }
    if let Some(v) = get("synthesis", "partition_workers") {
        out.skip(
            "engine",
            "synthesis.partition_workers",
            v,
            "Deprecated and ignored by Curio.",
        );
    }
    if let Some(v) = get("pipeline", "enabled") {
        match v.as_bool() {
            Some(b) => out.set("engine", "pipeline", Value::Boolean(b)),
            None => out.skip("engine", "pipeline.enabled", v, "It is not a boolean."),
        }
    }
    if let Some(v) = get("pipeline", "synthesis_concurrency") {
        match v.as_integer() {
            Some(n) if n >= 0 => out.set("engine", "synthesis_threads", Value::Integer(n)),
            _ => out.skip(
                "engine",
                "pipeline.synthesis_concurrency",
                v,
                "Not a count.",
            ),
        }
    }
    for key in [
        "synthesis_lookahead",
        "max_parallel_synthesis",
        "slot_size",
        "max_gpu_queue_depth",
    ] {
        if let Some(v) = get("pipeline", key) {
            out.skip(
                "engine",
                &format!("pipeline.{key}"),
                v,
                "The host memory budget bounds how many synthesized partitions wait for a device.",
            );
        }
    }

    // [logging]
    if let Some(v) = get("logging", "level") {
        match string(v).map(str::trim) {
            Some(l @ ("error" | "warn" | "info" | "debug" | "trace")) => {
                out.set("log", "level", Value::String(l.to_owned()))
            }
            _ => out.skip(
                "log",
                "logging.level",
                v,
                "cuzk takes one level (error, warn, info, debug or trace), not a filter.",
            ),
        }
    }
    if let Some(v) = get("logging", "format") {
        match string(v) {
            Some("json") => out.set("log", "format", Value::String("json".into())),
            _ => out.skip(
                "log",
                "logging.format",
                v,
                "cuzk writes \"human\" or \"json\".",
            ),
        }
    }

    // Anything else Curio's daemon did not know either.
    let known: &[(&str, &[&str])] = &[
        ("daemon", &["listen", "status_listen"]),
        ("srs", &["param_cache", "preload"]),
        (
            "memory",
            &[
                "total_budget",
                "safety_margin",
                "eviction_min_idle",
                "pinned_budget",
                "working_memory_budget",
            ],
        ),
        (
            "gpus",
            &["devices", "gpu_threads", "gpu_workers_per_device"],
        ),
        (
            "scheduler",
            &["max_batch_size", "max_batch_wait_ms", "sort_by_type"],
        ),
        ("synthesis", &["threads", "partition_workers"]),
        (
            "pipeline",
            &[
                "enabled",
                "synthesis_lookahead",
                "synthesis_concurrency",
                "max_parallel_synthesis",
                "slot_size",
                "max_gpu_queue_depth",
            ],
        ),
        ("logging", &["level", "format"]),
    ];
    for (section, v) in curio {
        let keys = known.iter().find(|(s, _)| s == section).map(|(_, k)| *k);
        match v.as_table() {
            Some(t) => {
                for (k, v) in t {
                    if !keys.is_some_and(|keys| keys.contains(&k.as_str())) {
                        out.skip(
                            "server",
                            &format!("{section}.{k}"),
                            v,
                            "Curio's daemon ignores it too.",
                        );
                    }
                }
            }
            None => out.skip("server", section, v, "Curio's daemon ignores it too."),
        }
    }
    Ok(out)
}

/// Runs `cuzk config from-curio`.
pub fn run(args: Args) -> Result<(), CliError> {
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| CliError::input(format!("{}: {e}", args.file.display())))?;
    let curio: toml::Table = toml::from_str(&text).map_err(|e| {
        CliError::input(format!(
            "{}: not a TOML file: {}",
            args.file.display(),
            e.to_string().replace('\n', " ")
        ))
    })?;
    let allow: Vec<Cidr> = args
        .allow
        .iter()
        .map(|a| {
            a.parse()
                .map_err(|e: String| CliError::input(format!("--allow: {e}")))
        })
        .collect::<Result<_, _>>()?;
    let out = convert(&curio, &allow, cfg!(feature = "cuda")).map_err(CliError::input)?;
    let result = out.text(&args.file.display().to_string());
    check(&result)?;
    match &args.out {
        Some(p) => std::fs::write(p, &result)
            .map_err(|e| CliError::input(format!("{}: {e}", p.display())))?,
        None => print!("{result}"),
    }
    Ok(())
}

/// The converted text parses and validates as our configuration.
fn check(text: &str) -> Result<(), CliError> {
    let cfg: Config = toml::from_str(text)
        .map_err(|e| CliError::internal(format!("the converted config does not parse: {e}")))?;
    cfg.validate()
        .map_err(|e| CliError::input(format!("the converted config is not valid: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(text: &str, allow: &[&str], cuda: bool) -> (String, Config) {
        let t: toml::Table = toml::from_str(text).unwrap();
        let allow: Vec<Cidr> = allow.iter().map(|a| a.parse().unwrap()).collect();
        let out = convert(&t, &allow, cuda).unwrap().text("test.toml");
        check(&out).unwrap();
        let cfg: Config = toml::from_str(&out).unwrap();
        (out, cfg)
    }

    #[test]
    fn an_empty_curio_file_keeps_curios_socket_and_parameter_directory() {
        let (_, cfg) = conv("", &[], true);
        assert_eq!(cfg.server.listen, CURIO_LISTEN);
        assert_eq!(cfg.params.dir, PathBuf::from(CURIO_PARAM_CACHE));
        assert_eq!(cfg.devices.backend, cuzk_server::config::Backend::Cuda);
    }

    #[test]
    fn every_key_is_carried_or_commented() {
        let curio = r#"
[daemon]
listen = "0.0.0.0:9820"
status_listen = "0.0.0.0:9821"
[srs]
param_cache = "/srv/params"
preload = ["porep-32g"]
[memory]
total_budget = "256GiB"
safety_margin = "5GiB"
eviction_min_idle = "5m"
pinned_budget = "1GiB"
[gpus]
devices = [0, 1]
gpu_threads = 32
gpu_workers_per_device = 3
[scheduler]
max_batch_size = 1
max_batch_wait_ms = 10000
sort_by_type = true
[synthesis]
threads = 0
partition_workers = 7
[pipeline]
enabled = true
synthesis_lookahead = 1
synthesis_concurrency = 2
max_gpu_queue_depth = 0
[logging]
level = "info,cuzk_core=debug"
format = "json"
[extra]
flavour = "x"
"#;
        let (text, cfg) = conv(curio, &["10.0.0.0/8"], true);
        assert_eq!(cfg.server.listen, "0.0.0.0:9820");
        assert_eq!(cfg.server.allow_unauthenticated_from, vec!["10.0.0.0/8"]);
        assert_eq!(cfg.http.listen, "0.0.0.0:9821");
        assert!(cfg.http.allow_remote);
        assert_eq!(cfg.params.dir, PathBuf::from("/srv/params"));
        assert!(cfg.params.preload.is_empty(), "Curio ignored srs.preload");
        assert_eq!(cfg.engine.host_memory, (256u64 << 30).to_string());
        assert_eq!(cfg.devices.cuda, vec!["0", "1"]);
        assert_eq!(cfg.engine.workers_per_device, 3);
        assert_eq!(cfg.engine.synthesis_threads, 2);
        assert!(cfg.engine.pipeline);
        assert_eq!(cfg.log.format, cuzk_server::config::LogFormat::Json);
        assert_eq!(
            cfg.log.level,
            cuzk_server::config::LogLevel::Info,
            "a filter is not carried over"
        );
        for key in [
            "srs.preload",
            "memory.safety_margin",
            "memory.eviction_min_idle",
            "memory.pinned_budget",
            "gpus.gpu_threads",
            "scheduler.max_batch_size",
            "scheduler.max_batch_wait_ms",
            "scheduler.sort_by_type",
            "synthesis.threads",
            "synthesis.partition_workers",
            "pipeline.synthesis_lookahead",
            "pipeline.max_gpu_queue_depth",
            "logging.level",
            "extra.flavour",
        ] {
            assert!(
                text.contains(&format!("# Curio {key} = ")),
                "{key} is not commented:\n{text}"
            );
        }
    }

    #[test]
    fn a_remote_listener_without_allow_is_refused_not_opened() {
        let t: toml::Table = toml::from_str("[daemon]\nlisten = \"0.0.0.0:9820\"").unwrap();
        let e = convert(&t, &[], false).err().unwrap();
        assert!(e.contains("--allow CIDR"), "{e}");
        let (_, cfg) = conv(
            "[daemon]\nlisten = \"0.0.0.0:9820\"",
            &["10.1.0.0/16"],
            false,
        );
        assert_eq!(cfg.server.allow_unauthenticated_from, vec!["10.1.0.0/16"]);
        assert_eq!(cfg.devices.backend, cuzk_server::config::Backend::Cpu);
        let (_, cfg) = conv("[daemon]\nlisten = \"127.0.0.1:9820\"", &[], true);
        assert!(cfg.server.allow_unauthenticated_from.is_empty());
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(bytes("256GiB"), Some(256 << 30));
        assert_eq!(bytes("100MB"), Some(100_000_000));
        assert_eq!(bytes("12345"), Some(12345));
        assert_eq!(bytes("lots"), None);
        assert_eq!(bytes("5 GiB"), Some(5 << 30));
    }
}
