//! The daemon's configuration: one typed TOML file, every key documented in docs/CONFIG.md
//! (a test keeps the two in step). Unknown keys are errors; missing keys take the defaults
//! below.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The whole configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The gRPC listener.
    pub server: ServerConfig,
    /// The HTTP listener for /metrics, /status and the status page.
    pub http: HttpConfig,
    /// The proving engine.
    pub engine: EngineSection,
    /// Parameters and caches.
    pub params: ParamsConfig,
    /// Which devices prove.
    pub devices: DevicesConfig,
    /// Stopping on SIGTERM/SIGINT.
    pub shutdown: ShutdownConfig,
    /// Logging.
    pub log: LogConfig,
}

/// `[server]`
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// `unix:///path` or `host:port` (host defaults to 127.0.0.1 when only `:port` is given).
    pub listen: String,
    /// Largest gRPC message accepted or sent, bytes.
    pub max_message_bytes: u64,
    /// Bearer token every call must carry (`authorization: Bearer <token>`) unless its peer
    /// is in `allow_unauthenticated_from`. A non-loopback `listen` needs a token or that
    /// list. Empty: no token.
    pub auth_token: String,
    /// Networks (CIDR, e.g. "10.0.0.0/8") whose peers need no token: for clients that
    /// cannot send one (Curio's). Peers outside need the token, or are refused without one.
    pub allow_unauthenticated_from: Vec<String>,
    /// Lets `allow_unauthenticated_from` hold a `/0` network (every IPv4 or IPv6 peer may
    /// call without a token); refused otherwise, so no config opens the daemon by accident.
    pub allow_every_network: bool,
    /// PEM certificate chain for TLS on a TCP listener; empty: plaintext.
    pub tls_cert_file: String,
    /// PEM private key of `tls_cert_file`.
    pub tls_key_file: String,
    /// PEM CA certificates; when set, clients must present a certificate they signed.
    pub tls_client_ca_file: String,
    /// A `Prove` whose caller gives up (deadline, disconnect) cancels its job when no other
    /// caller waits for it; off, the job runs on and its result is kept.
    pub cancel_abandoned: bool,
}

/// The longest `shutdown.grace_secs` accepted: a day.
pub const MAX_GRACE_SECS: u64 = 86_400;

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: "unix:///run/cuzk/cuzk.sock".into(),
            max_message_bytes: crate::DEFAULT_MAX_MESSAGE_BYTES as u64,
            auth_token: String::new(),
            allow_unauthenticated_from: Vec::new(),
            allow_every_network: false,
            tls_cert_file: String::new(),
            tls_key_file: String::new(),
            tls_client_ca_file: String::new(),
            cancel_abandoned: true,
        }
    }
}

/// `[http]`
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpConfig {
    /// `host:port` for /metrics, /status and the status page; empty: no HTTP listener.
    pub listen: String,
    /// Allow `listen` beyond loopback (the HTTP side has no authentication).
    pub allow_remote: bool,
}

/// `[engine]`
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineSection {
    /// Jobs queued or running at most; more are refused with RESOURCE_EXHAUSTED.
    pub queue_capacity: u64,
    /// Partitions synthesized at once; 0 = half the CPU cores (at least 1).
    pub synthesis_threads: u64,
    /// Extra synthesis threads only for CRITICAL work (WinningPoSt).
    pub urgent_synthesis_threads: u64,
    /// Workers per device (one prepares while another computes).
    pub workers_per_device: u64,
    /// Seconds a finished job's result stays available to its request id.
    pub retention_secs: u64,
    /// Finished jobs kept at most; the oldest go first.
    pub retention_max_jobs: u64,
    /// Bytes of finished jobs' proofs kept at most; the oldest go first.
    pub retention_max_bytes: u64,
    /// Seconds one partition may run on a device before the device is taken for hung
    /// (quarantined; the partition proved elsewhere); 0 = no watchdog.
    pub device_timeout_secs: u64,
    /// Host memory for synthesized partitions and parameters: "auto" (cgroup limit or
    /// MemTotal minus 2 GiB) or a number of bytes.
    pub host_memory: String,
    /// Overlap synthesis with proving.
    pub pipeline: bool,
    /// While CRITICAL work synthesizes, ordinary synthesis pauses (at most 1 s).
    pub pause_for_urgent: bool,
    /// Milliseconds a device waits, at a yield point, for a CRITICAL partition that is being
    /// synthesized (0 = off).
    pub hold_for_urgent_ms: u64,
}

impl Default for EngineSection {
    fn default() -> Self {
        EngineSection {
            queue_capacity: 256,
            synthesis_threads: 0,
            urgent_synthesis_threads: 1,
            workers_per_device: 2,
            retention_secs: 600,
            retention_max_jobs: 10_000,
            retention_max_bytes: 256 << 20,
            device_timeout_secs: 1800,
            host_memory: "auto".into(),
            pipeline: true,
            pause_for_urgent: true,
            hold_for_urgent_ms: 100,
        }
    }
}

/// `[params]`
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ParamsConfig {
    /// Directory of the `.params` and `.vk` files.
    pub dir: PathBuf,
    /// Directory for extracted PCE files and other caches.
    pub cache_dir: PathBuf,
    /// Synthesize with the pre-compiled constraint evaluator.
    pub use_pce: bool,
    /// Circuits loaded at start, in the background: parameters, and the PCE from the cache
    /// (extracted when it is missing), e.g. `["winning-32g", "wpost-32g"]`.
    pub preload: Vec<String>,
}

impl Default for ParamsConfig {
    fn default() -> Self {
        ParamsConfig {
            dir: PathBuf::from(cuzk_filecoin::DEFAULT_PARAMETER_DIR),
            cache_dir: PathBuf::from("/var/cache/cuzk"),
            use_pce: true,
            preload: Vec::new(),
        }
    }
}

/// Which backend proves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The CPU.
    Cpu,
    /// NVIDIA GPUs.
    Cuda,
}

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// For people.
    Human,
    /// One JSON object per line.
    Json,
}

/// The least severe level logged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Errors only.
    Error,
    /// And warnings.
    Warn,
    /// And the daemon's progress.
    Info,
    /// And details.
    Debug,
    /// Everything.
    Trace,
}

impl std::str::FromStr for LogLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "error" => Ok(LogLevel::Error),
            "warn" => Ok(LogLevel::Warn),
            "info" => Ok(LogLevel::Info),
            "debug" => Ok(LogLevel::Debug),
            "trace" => Ok(LogLevel::Trace),
            l => Err(format!("{l:?} is not error, warn, info, debug or trace")),
        }
    }
}

/// `[devices]`
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DevicesConfig {
    /// "cpu" or "cuda".
    pub backend: Backend,
    /// CUDA devices by PCI bus id ("0000:c1:00.0") or ordinal ("1"); empty: every device.
    pub cuda: Vec<String>,
    /// VRAM budget per CUDA device, bytes; 0: free memory at start minus a margin.
    pub vram_budget_bytes: u64,
    /// Keep parameters on the GPU between proofs when the budget allows.
    pub resident_params: bool,
    /// With the cuda backend, also a CPU device that takes work only while every GPU is
    /// quarantined.
    pub cpu_fallback: bool,
}

impl Default for DevicesConfig {
    fn default() -> Self {
        DevicesConfig {
            backend: Backend::Cpu,
            cuda: Vec::new(),
            vram_budget_bytes: 0,
            resident_params: true,
            cpu_fallback: false,
        }
    }
}

/// `[shutdown]`
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShutdownConfig {
    /// Seconds in-flight jobs get to finish after SIGTERM/SIGINT; what is left is cancelled.
    pub grace_secs: u64,
    /// Cancel in-flight jobs at once instead of letting them finish.
    pub cancel_in_flight: bool,
}

impl Default for ShutdownConfig {
    fn default() -> Self {
        ShutdownConfig {
            grace_secs: 120,
            cancel_in_flight: false,
        }
    }
}

/// `[log]`
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogConfig {
    /// "human" or "json".
    pub format: LogFormat,
    /// Minimum level: "error", "warn", "info", "debug" or "trace".
    pub level: LogLevel,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            format: LogFormat::Human,
            level: LogLevel::Info,
        }
    }
}

/// Where the gRPC service listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listen {
    /// A unix socket at this path (created with mode 0600).
    Unix(PathBuf),
    /// A TCP address.
    Tcp(SocketAddr),
}

/// A configuration problem, naming the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The named file does not exist or cannot be read.
    #[error("config file {path}: {reason}")]
    File { path: PathBuf, reason: String },
    /// The file is not valid TOML or has unknown keys or wrong types.
    #[error("config file {path}: {reason}")]
    Parse { path: PathBuf, reason: String },
    /// A value is out of range or inconsistent.
    #[error("config {key}: {reason}")]
    Value { key: &'static str, reason: String },
}

fn value(key: &'static str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Value {
        key,
        reason: reason.into(),
    }
}

impl Config {
    /// Reads `path`; a named file that is missing is an error.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::File {
            path: path.into(),
            reason: e.to_string(),
        })?;
        let cfg: Config = toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.into(),
            reason: e.to_string().replace('\n', " "),
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// The configuration as TOML (what the daemon logs at start), the token masked.
    pub fn effective(&self) -> String {
        let mut c = self.clone();
        if !c.server.auth_token.is_empty() {
            c.server.auth_token = "<set>".into();
        }
        toml::to_string(&c).unwrap_or_else(|e| format!("<unprintable: {e}>"))
    }

    /// Checks values and their combinations.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let listen = self.listen()?;
        let trusted = self.trusted_networks()?;
        if let Some(all) = trusted.iter().find(|n| n.is_everything()) {
            if !self.server.allow_every_network {
                return Err(value(
                    "server.allow_unauthenticated_from",
                    format!(
                        "{all} lets every network call without a token; name the networks of \
                         your clients, or set server.allow_every_network = true to mean it"
                    ),
                ));
            }
        }
        if let Listen::Tcp(a) = listen {
            if !a.ip().is_loopback() && self.server.auth_token.is_empty() && trusted.is_empty() {
                return Err(value(
                    "server.auth_token",
                    format!(
                        "listening on {a}, beyond loopback, requires a token or \
                         server.allow_unauthenticated_from"
                    ),
                ));
            }
        }
        let tls = [
            &self.server.tls_cert_file,
            &self.server.tls_key_file,
            &self.server.tls_client_ca_file,
        ];
        if tls.iter().any(|f| !f.is_empty()) {
            if self.server.tls_cert_file.is_empty() || self.server.tls_key_file.is_empty() {
                return Err(value(
                    "server.tls_cert_file",
                    "TLS needs both tls_cert_file and tls_key_file",
                ));
            }
            if matches!(listen, Listen::Unix(_)) {
                return Err(value(
                    "server.tls_cert_file",
                    "TLS applies to a TCP listener, not a unix socket",
                ));
            }
        }
        if let Some(a) = self.http_listen()? {
            if !a.ip().is_loopback() && !self.http.allow_remote {
                return Err(value(
                    "http.allow_remote",
                    format!("HTTP on {a}, beyond loopback, must be allowed explicitly"),
                ));
            }
        }
        if self.server.max_message_bytes < 1024 {
            return Err(value("server.max_message_bytes", "must be at least 1024"));
        }
        if self.engine.queue_capacity == 0 {
            return Err(value("engine.queue_capacity", "must be at least 1"));
        }
        if self.shutdown.grace_secs > MAX_GRACE_SECS {
            return Err(value(
                "shutdown.grace_secs",
                format!("at most {MAX_GRACE_SECS} (one day)"),
            ));
        }
        if self.engine.workers_per_device == 0 {
            return Err(value("engine.workers_per_device", "must be at least 1"));
        }
        if self.engine.hold_for_urgent_ms > 1000 {
            return Err(value(
                "engine.hold_for_urgent_ms",
                "at most 1000 (a device idles that long per yield point)",
            ));
        }
        self.host_memory()?;
        self.preload()?;
        if self.devices.backend == Backend::Cpu && !self.devices.cuda.is_empty() {
            return Err(value("devices.cuda", "set, but devices.backend is cpu"));
        }
        if self.devices.backend == Backend::Cpu && self.devices.cpu_fallback {
            return Err(value(
                "devices.cpu_fallback",
                "set, but devices.backend is cpu (the CPU is the device already)",
            ));
        }
        if self.engine.retention_max_jobs == 0 {
            return Err(value("engine.retention_max_jobs", "must be at least 1"));
        }
        Ok(())
    }

    /// The listener `server.listen` names.
    pub fn listen(&self) -> Result<Listen, ConfigError> {
        let l = self.server.listen.trim();
        if let Some(path) = l.strip_prefix("unix://") {
            if path.is_empty() || !path.starts_with('/') {
                return Err(value(
                    "server.listen",
                    "a unix socket needs an absolute path",
                ));
            }
            return Ok(Listen::Unix(PathBuf::from(path)));
        }
        let l = if l.starts_with(':') {
            format!("127.0.0.1{l}")
        } else {
            l.to_owned()
        };
        l.parse::<SocketAddr>().map(Listen::Tcp).map_err(|_| {
            value(
                "server.listen",
                format!("{l:?} is neither unix:///path nor host:port"),
            )
        })
    }

    /// The networks of `server.allow_unauthenticated_from`.
    pub fn trusted_networks(&self) -> Result<Vec<crate::access::Cidr>, ConfigError> {
        self.server
            .allow_unauthenticated_from
            .iter()
            .map(|n| {
                n.parse()
                    .map_err(|e| value("server.allow_unauthenticated_from", e))
            })
            .collect()
    }

    /// The access rule of the gRPC listener.
    pub fn access(&self) -> Result<crate::access::Access, ConfigError> {
        Ok(crate::access::Access {
            token: (!self.server.auth_token.is_empty()).then(|| self.server.auth_token.clone()),
            trusted: self.trusted_networks()?,
        })
    }

    /// TLS material read from the files `server.tls_*` name; `None` without TLS.
    pub fn tls(&self) -> Result<Option<crate::Tls>, ConfigError> {
        if self.server.tls_cert_file.is_empty() {
            return Ok(None);
        }
        let read = |key: &'static str, path: &str| {
            std::fs::read(path).map_err(|e| value(key, format!("cannot read {path}: {e}")))
        };
        Ok(Some(crate::Tls {
            cert: read("server.tls_cert_file", &self.server.tls_cert_file)?,
            key: read("server.tls_key_file", &self.server.tls_key_file)?,
            client_ca: match self.server.tls_client_ca_file.as_str() {
                "" => None,
                f => Some(read("server.tls_client_ca_file", f)?),
            },
        }))
    }

    /// The HTTP listener address, if any.
    pub fn http_listen(&self) -> Result<Option<SocketAddr>, ConfigError> {
        let l = self.http.listen.trim();
        if l.is_empty() {
            return Ok(None);
        }
        let l = if l.starts_with(':') {
            format!("127.0.0.1{l}")
        } else {
            l.to_owned()
        };
        l.parse::<SocketAddr>()
            .map(Some)
            .map_err(|_| value("http.listen", format!("{l:?} is not host:port")))
    }

    /// The host budget in bytes.
    pub fn host_memory(&self) -> Result<u64, ConfigError> {
        match self.engine.host_memory.trim() {
            "auto" => Ok(cuzk_engine::auto_host_budget(2 << 30)),
            s => s.parse::<u64>().map_err(|_| {
                value(
                    "engine.host_memory",
                    format!("{s:?} is neither auto nor bytes"),
                )
            }),
        }
    }

    /// The circuits named in `params.preload`.
    pub fn preload(&self) -> Result<Vec<cuzk_filecoin::CircuitSpec>, ConfigError> {
        self.params
            .preload
            .iter()
            .map(|id| {
                crate::convert::circuit(id)
                    .map_err(|e| value("params.preload", e.message().to_owned()))
            })
            .collect()
    }

    /// Synthesis threads, with 0 resolved to half the cores.
    pub fn synthesis_threads(&self) -> usize {
        match self.engine.synthesis_threads {
            0 => std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1)),
            n => n as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Config, String> {
        let c: Config = toml::from_str(s).map_err(|e| e.to_string())?;
        c.validate().map_err(|e| e.to_string())?;
        Ok(c)
    }

    #[test]
    fn defaults_are_valid_and_round_trip() {
        let c = Config::default();
        c.validate().unwrap();
        let back: Config = toml::from_str(&toml::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        assert_eq!(parse("").unwrap(), c);
    }

    #[test]
    fn unknown_keys_bad_values_and_open_listeners_are_refused() {
        assert!(parse("[server]\nlisten_on = \"x\"")
            .unwrap_err()
            .contains("unknown field"));
        assert!(parse("[nope]\n").unwrap_err().contains("unknown field"));
        assert!(parse("[engine]\nqueue_capacity = \"many\"").is_err());
        assert!(parse("[shutdown]\ngrace_secs = 9223372036854775807")
            .unwrap_err()
            .contains("shutdown.grace_secs"));
        assert!(parse("[shutdown]\ngrace_secs = 86400").is_ok());
        assert!(parse("[engine]\nqueue_capacity = 0")
            .unwrap_err()
            .contains("queue_capacity"));
        assert!(parse("[server]\nlisten = \"0.0.0.0:9000\"")
            .unwrap_err()
            .contains("auth_token"));
        assert!(parse("[server]\nlisten = \"0.0.0.0:9000\"\nauth_token = \"s\"").is_ok());
        assert!(parse(
            "[server]\nlisten = \"0.0.0.0:9000\"\nallow_unauthenticated_from = [\"10.0.0.0/8\"]"
        )
        .is_ok());
        let every = "[server]\nlisten = \"0.0.0.0:9000\"\nallow_unauthenticated_from = \
                     [\"10.0.0.0/8\", \"::/0\"]";
        assert!(parse(every)
            .unwrap_err()
            .contains("::/0 lets every network call without a token"));
        assert!(parse(&format!("{every}\nallow_every_network = true")).is_ok());
        assert!(parse(
            "[server]\nlisten = \"0.0.0.0:9000\"\nallow_unauthenticated_from = [\"10.0.0.1/8\"]"
        )
        .unwrap_err()
        .contains("allow_unauthenticated_from"));
        assert!(parse(
            "[server]\nlisten = \"0.0.0.0:9000\"\ntls_cert_file = \"c.pem\"\nauth_token = \"s\""
        )
        .unwrap_err()
        .contains("tls_key_file"));
        assert!(
            parse("[server]\ntls_cert_file = \"c.pem\"\ntls_key_file = \"k.pem\"")
                .unwrap_err()
                .contains("unix socket")
        );
        assert!(parse("[server]\nlisten = \"unix://relative\"").is_err());
        assert!(parse("[devices]\nbackend = \"tpu\"").is_err());
        assert!(parse("[devices]\ncuda = [\"0\"]")
            .unwrap_err()
            .contains("devices.cuda"));
        assert!(parse("[engine]\nhost_memory = \"lots\"").is_err());
        assert!(parse("[engine]\nhold_for_urgent_ms = 5000")
            .unwrap_err()
            .contains("hold_for_urgent_ms"));
        assert!(parse("[log]\nformat = \"xml\"").is_err());
        assert!(parse("[http]\nlisten = \"0.0.0.0:9821\"")
            .unwrap_err()
            .contains("allow_remote"));
        assert!(parse("[http]\nlisten = \"0.0.0.0:9821\"\nallow_remote = true").is_ok());
        assert!(parse("[http]\nlisten = \"127.0.0.1:9821\"").is_ok());
        assert!(parse("[http]\nlisten = \"nowhere\"").is_err());
        assert!(parse("[params]\npreload = [\"porep-3k\"]")
            .unwrap_err()
            .contains("params.preload"));
        let c = parse("[params]\npreload = [\"winning-2k\", \"porep-32g\"]").unwrap();
        assert_eq!(c.preload().unwrap().len(), 2);
        let c = parse("[server]\nlisten = \":9820\"").unwrap();
        assert_eq!(
            c.listen().unwrap(),
            Listen::Tcp("127.0.0.1:9820".parse().unwrap())
        );
    }

    #[test]
    fn a_named_file_that_is_missing_is_an_error() {
        let e = Config::load(Path::new("/nonexistent/cuzk.toml")).unwrap_err();
        assert!(matches!(e, ConfigError::File { .. }), "{e}");
    }

    #[test]
    fn the_effective_config_masks_the_token() {
        let mut c = Config::default();
        c.server.auth_token = "secret".into();
        assert!(!c.effective().contains("secret"));
    }

    /// docs/CONFIG.md documents every key the code knows, and no key the code does not.
    #[test]
    fn config_doc_and_code_agree() {
        let doc = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/CONFIG.md"),
        )
        .expect("docs/CONFIG.md");
        let table: toml::Table =
            toml::from_str(&toml::to_string(&Config::default()).unwrap()).unwrap();
        let mut code_keys = Vec::new();
        for (section, v) in &table {
            for key in v.as_table().expect("sections").keys() {
                code_keys.push(format!("{section}.{key}"));
            }
        }
        // Documented keys are the `section.key` names in the first column of the tables.
        let doc_keys: Vec<String> = doc
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .filter(|k| k.contains('.'))
            .map(str::to_owned)
            .collect();
        for k in &code_keys {
            assert!(
                doc_keys.contains(k),
                "{k} is not documented in docs/CONFIG.md"
            );
        }
        for k in &doc_keys {
            assert!(
                code_keys.contains(k),
                "docs/CONFIG.md documents unknown key {k}"
            );
        }
    }
}
