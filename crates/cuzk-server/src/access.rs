//! Who may call: a bearer token, and networks trusted without one.
//!
//! Curio's Go client dials plaintext gRPC and sends no metadata, so a remote prover it can
//! reach must trust the network. That trust is explicit and narrow: a list of CIDR blocks
//! whose peers need no token. Every other peer needs the token when one is set; when none is
//! set, peers outside the list are refused (a listener is never silently open). Calls on a
//! unix socket carry no peer address: the socket's file mode (0600) is their access rule,
//! and they need the token only when one is set.

use std::net::IpAddr;

/// An IP network in CIDR notation ("10.0.0.0/8", "fd00::/8", "192.168.1.7").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl std::str::FromStr for Cidr {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (a, p) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = a
            .trim()
            .parse()
            .map_err(|_| format!("{s:?} is not an IP network (a.b.c.d/n or x::y/n)"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match p {
            None => max,
            Some(p) => p
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|&n| n <= max)
                .ok_or_else(|| format!("{s:?}: the prefix length must be 0 to {max}"))?,
        };
        let net = Cidr { addr, prefix };
        if net.network() != addr {
            return Err(format!(
                "{s:?} has host bits set beyond /{prefix} (the network is {}/{prefix})",
                net.network()
            ));
        }
        Ok(net)
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

fn mask(bits: u32, prefix: u8) -> u128 {
    match prefix {
        0 => 0,
        p => (u128::MAX << (bits - u32::from(p))) & (u128::MAX >> (128 - bits)),
    }
}

impl Cidr {
    /// Whether this is every address of its family (a `/0` network).
    pub fn is_everything(&self) -> bool {
        self.prefix == 0
    }

    fn network(&self) -> IpAddr {
        match self.addr {
            IpAddr::V4(a) => {
                let m = mask(32, self.prefix) as u32;
                IpAddr::V4((u32::from(a) & m).into())
            }
            IpAddr::V6(a) => IpAddr::V6((u128::from(a) & mask(128, self.prefix)).into()),
        }
    }

    /// Whether `ip` lies in this network (an IPv4-mapped IPv6 peer counts as its IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip.to_canonical()) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let m = mask(32, self.prefix) as u32;
                u32::from(n) & m == u32::from(a) & m
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let m = mask(128, self.prefix);
                u128::from(n) & m == u128::from(a) & m
            }
            _ => false,
        }
    }
}

/// The access rule of a listener.
#[derive(Clone, Debug, Default)]
pub struct Access {
    /// The bearer token (`authorization: Bearer <token>`), if any.
    pub token: Option<String>,
    /// Peers in these networks need no token.
    pub trusted: Vec<Cidr>,
}

impl Access {
    /// Decides one call from `peer` (None: a unix socket) carrying `authorization`.
    pub fn check(
        &self,
        peer: Option<IpAddr>,
        authorization: Option<&str>,
    ) -> Result<(), tonic::Status> {
        if let Some(ip) = peer {
            if self.trusted.iter().any(|n| n.contains(ip)) {
                return Ok(());
            }
        }
        let Some(want) = &self.token else {
            return match peer {
                Some(ip) if !self.trusted.is_empty() => Err(tonic::Status::permission_denied(
                    format!("peer {ip} is not in server.allow_unauthenticated_from"),
                )),
                _ => Ok(()),
            };
        };
        match authorization.and_then(|v| v.strip_prefix("Bearer ")) {
            Some(t) if constant_time_eq(t.as_bytes(), want.as_bytes()) => Ok(()),
            Some(_) => Err(tonic::Status::unauthenticated("wrong bearer token")),
            None => Err(tonic::Status::unauthenticated(
                "missing authorization: Bearer <token>",
            )),
        }
    }

    /// One line for the start-up log.
    pub fn describe(&self) -> String {
        let token = if self.token.is_some() {
            "a bearer token"
        } else {
            "no token"
        };
        if self.trusted.is_empty() {
            format!("every call needs {token}")
        } else {
            let nets: Vec<String> = self.trusted.iter().map(Cidr::to_string).collect();
            let others = if self.token.is_some() {
                "other peers need the token"
            } else {
                "other TCP peers are refused"
            };
            format!("peers in {} need no token; {others}", nets.join(", "))
        }
    }

    /// A tonic interceptor applying this rule.
    pub(crate) fn interceptor(
        self,
    ) -> impl FnMut(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> + Clone {
        move |req: tonic::Request<()>| {
            let auth = req
                .metadata()
                .get("authorization")
                .and_then(|v| v.to_str().ok());
            self.check(req.remote_addr().map(|a| a.ip()), auth)?;
            Ok(req)
        }
    }
}

/// Compares without stopping at the first difference, so timing does not reveal the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn cidrs_parse_and_contain() {
        let n: Cidr = "10.0.0.0/8".parse().unwrap();
        assert!(n.contains(ip("10.255.1.2")));
        assert!(!n.contains(ip("11.0.0.1")));
        assert!(n.contains(ip("::ffff:10.1.2.3")), "IPv4-mapped peers count");
        let one: Cidr = "192.168.1.7".parse().unwrap();
        assert!(one.contains(ip("192.168.1.7")) && !one.contains(ip("192.168.1.8")));
        let all: Cidr = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(ip("8.8.8.8")) && !all.contains(ip("::1")));
        let v6: Cidr = "fd00::/8".parse().unwrap();
        assert!(v6.contains(ip("fd12::1")) && !v6.contains(ip("fe80::1")));
        assert!("10.0.0.1/8"
            .parse::<Cidr>()
            .unwrap_err()
            .contains("host bits"));
        assert!("10.0.0.0/33".parse::<Cidr>().is_err());
        assert!("ten/8".parse::<Cidr>().is_err());
        assert_eq!(
            "10.0.0.0/8".parse::<Cidr>().unwrap().to_string(),
            "10.0.0.0/8"
        );
    }

    #[test]
    fn trusted_peers_need_no_token_others_do() {
        let a = Access {
            token: Some("s".into()),
            trusted: vec!["10.0.0.0/8".parse().unwrap()],
        };
        assert!(a.check(Some(ip("10.1.1.1")), None).is_ok());
        let e = a.check(Some(ip("192.168.0.1")), None).unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated);
        assert!(a.check(Some(ip("192.168.0.1")), Some("Bearer s")).is_ok());
        assert!(a.check(Some(ip("192.168.0.1")), Some("Bearer x")).is_err());
        assert!(
            a.check(None, None).is_err(),
            "a unix socket needs the token when set"
        );

        let open_list = Access {
            token: None,
            trusted: vec!["10.0.0.0/8".parse().unwrap()],
        };
        let e = open_list.check(Some(ip("192.168.0.1")), None).unwrap_err();
        assert_eq!(e.code(), tonic::Code::PermissionDenied);
        assert!(open_list.check(None, None).is_ok());
        assert!(Access::default().check(Some(ip("127.0.0.1")), None).is_ok());
    }
}
