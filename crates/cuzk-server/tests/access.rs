//! Who may call, over real connections: trusted networks without a token (peers on a second
//! loopback address), the token for everyone else, and TLS with client certificates.

mod common;

use std::net::{IpAddr, SocketAddr};

use common::{cpu_device, fixtures, serve_on};
use cuzk_server::access::Access;
use cuzk_server::proto;
use cuzk_server::proto::proving_engine_client::ProvingEngineClient;
use cuzk_server::{ServeOptions, Tls};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic::Code;

/// A plaintext client whose connections come from `source` (an address on loopback).
async fn client_from(source: IpAddr, server: SocketAddr) -> ProvingEngineClient<Channel> {
    let channel = Endpoint::from_shared(format!("http://{server}"))
        .unwrap()
        .connect_with_connector(tower::service_fn(
            move |_: tonic::transport::Uri| async move {
                let socket = tokio::net::TcpSocket::new_v4()?;
                socket.bind(SocketAddr::new(source, 0))?;
                let tcp = socket.connect(server).await?;
                Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(tcp))
            },
        ))
        .await
        .expect("connect");
    ProvingEngineClient::new(channel)
}

async fn status(c: &mut ProvingEngineClient<Channel>, token: Option<&str>) -> Result<(), Code> {
    let mut r = tonic::Request::new(proto::GetStatusRequest {});
    if let Some(t) = token {
        r.metadata_mut()
            .insert("authorization", format!("Bearer {t}").parse().unwrap());
    }
    c.get_status(r).await.map(|_| ()).map_err(|e| e.code())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peers_in_a_trusted_network_need_no_token_others_do() {
    let (dir, _) = fixtures();
    let (trusted, other): (IpAddr, IpAddr) =
        ("127.0.0.2".parse().unwrap(), "127.0.0.1".parse().unwrap());
    let opts = ServeOptions {
        access: Access {
            token: Some("s3cret".into()),
            trusted: vec!["127.0.0.2/32".parse().unwrap()],
        },
        ..ServeOptions::default()
    };
    let s = serve_on(&dir, vec![cpu_device()], opts).await;
    let mut allowed = client_from(trusted, s.addr).await;
    assert_eq!(
        status(&mut allowed, None).await,
        Ok(()),
        "a trusted peer needs no token"
    );
    let mut refused = client_from(other, s.addr).await;
    assert_eq!(status(&mut refused, None).await, Err(Code::Unauthenticated));
    assert_eq!(
        status(&mut refused, Some("wrong")).await,
        Err(Code::Unauthenticated)
    );
    assert_eq!(status(&mut refused, Some("s3cret")).await, Ok(()));
    s.stop().await;

    // Without a token, a peer outside the list is refused outright.
    let opts = ServeOptions {
        access: Access {
            token: None,
            trusted: vec!["127.0.0.2/32".parse().unwrap()],
        },
        ..ServeOptions::default()
    };
    let s = serve_on(&dir, vec![cpu_device()], opts).await;
    let mut allowed = client_from(trusted, s.addr).await;
    assert_eq!(status(&mut allowed, None).await, Ok(()));
    let mut refused = client_from(other, s.addr).await;
    assert_eq!(
        status(&mut refused, None).await,
        Err(Code::PermissionDenied)
    );
    s.stop().await;
}

struct Pki {
    ca: String,
    server: (String, String),
    client: (String, String),
}

fn pki() -> Pki {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf = |names: Vec<String>| {
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &ca, &ca_key)
            .unwrap();
        (cert.pem(), key.serialize_pem())
    };
    Pki {
        ca: ca.pem(),
        server: leaf(vec!["localhost".into()]),
        client: leaf(vec!["curio-host".into()]),
    }
}

async fn tls_client(
    addr: SocketAddr,
    pki: &Pki,
    with_cert: bool,
) -> Result<ProvingEngineClient<Channel>, tonic::transport::Error> {
    let mut tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(&pki.ca))
        .domain_name("localhost");
    if with_cert {
        tls = tls.identity(Identity::from_pem(&pki.client.0, &pki.client.1));
    }
    let ch = Endpoint::from_shared(format!("https://{addr}"))
        .unwrap()
        .tls_config(tls)?
        .connect()
        .await?;
    Ok(ProvingEngineClient::new(ch))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_serves_clients_with_a_certificate_and_refuses_others() {
    let (dir, _) = fixtures();
    let pki = pki();
    let opts = ServeOptions {
        tls: Some(Tls {
            cert: pki.server.0.clone().into_bytes(),
            key: pki.server.1.clone().into_bytes(),
            client_ca: Some(pki.ca.clone().into_bytes()),
        }),
        ..ServeOptions::default()
    };
    let s = serve_on(&dir, vec![cpu_device()], opts).await;
    let mut good = tls_client(s.addr, &pki, true).await.expect("TLS connect");
    assert_eq!(status(&mut good, None).await, Ok(()));
    // No client certificate: the handshake or the first call fails.
    match tls_client(s.addr, &pki, false).await {
        Err(_) => {}
        Ok(mut c) => assert!(
            status(&mut c, None).await.is_err(),
            "served without a certificate"
        ),
    }
    // Plaintext against the TLS listener fails.
    let mut plain = client_from("127.0.0.1".parse().unwrap(), s.addr).await;
    assert!(status(&mut plain, None).await.is_err());
    s.stop().await;
}
