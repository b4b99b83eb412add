//! The registry's bounds without a server: a "database" that accepts connections and never
//! answers (a TCP listener on 127.0.0.1 that reads and discards). Every call returns within
//! the registry's `timeout` with `RegistryUnavailable`, for the postgres crate's `Registry`
//! (from a DSN and from a factory) and sqlx's `AsyncRegistry`. The bound allows a fixed margin
//! plus the lateness of a thread's sleep of the same length taken beside the call: the
//! scheduler's delay in this run, so the pass does not depend on the machine's speed.
#![cfg(all(feature = "postgres", feature = "sqlx"))]

use pg_idgen_client::registry::{tcp_timeouts, AsyncRegistry, Registry};
use pg_idgen_client::{Error, RegistryCondition};
use std::io::Read;
use std::net::TcpListener;
use std::time::{Duration, Instant};

mod timing;
use timing::Beside;

/// A listener that accepts every connection and never writes a byte; its port.
fn silent_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut sink = [0u8; 1024];
                while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
            });
        }
    });
    port
}

const MARGIN: Duration = Duration::from_millis(1500);

fn assert_unavailable<T: std::fmt::Debug>(
    r: Result<T, Error>,
    took: Duration,
    bound: Duration,
    lag: Duration,
) {
    match r {
        Err(e @ Error::RegistryUnavailable { .. }) => {
            assert_eq!(e.registry_condition(), Some(RegistryCondition::Unavailable));
        }
        other => panic!("expected RegistryUnavailable, got {other:?}"),
    }
    assert!(
        took <= bound + MARGIN + 2 * lag,
        "took {took:?}, the bound is {bound:?} (+ {MARGIN:?} + twice a {lag:?} scheduling delay)"
    );
}

#[test]
fn a_silent_server_is_unavailable_within_the_timeout() {
    let port = silent_server();
    let timeout = Duration::from_millis(700);
    let registry = Registry::connect(&format!(
        "host=127.0.0.1 port={port} user=postgres dbname=x connect_timeout=30"
    ))
    .unwrap()
    .timeout(timeout);
    for lease in [None, Some(Duration::from_secs(5))] {
        let beside = Beside::start(timeout);
        let t = Instant::now();
        let r = registry.snowflake(lease);
        let took = t.elapsed();
        assert_unavailable(r, took, timeout, beside.lag());
    }
    // A factory's connection too: the statement bound does not need TCP timeouts.
    let factory = Registry::new(move || {
        let mut config = postgres::Config::new();
        config
            .host("127.0.0.1")
            .port(port)
            .user("postgres")
            .dbname("x");
        config.connect(postgres::NoTls)
    })
    .timeout(timeout);
    let beside = Beside::start(timeout);
    let t = Instant::now();
    let r = factory.xid12(None);
    let took = t.elapsed();
    assert_unavailable(r, took, timeout, beside.lag());
    // Closing a registry with nothing to release is at once (no wait on the silent server).
    let beside = Beside::start(Duration::from_millis(1));
    let t = Instant::now();
    registry.close().unwrap();
    let took = t.elapsed();
    let lag = beside.lag();
    assert!(
        took < Duration::from_millis(100) + 2 * lag,
        "close() took {took:?} (scheduling delay {lag:?})"
    );
}

#[test]
fn tcp_timeouts_fill_in_what_the_dsn_leaves_out() {
    let mut config: postgres::Config = "host=h user=u".parse().unwrap();
    tcp_timeouts(&mut config, Duration::from_secs(5));
    assert_eq!(config.get_connect_timeout(), Some(&Duration::from_secs(5)));
    assert_eq!(config.get_tcp_user_timeout(), Some(&Duration::from_secs(5)));
    assert!(config.get_keepalives());
    assert_eq!(config.get_keepalives_idle(), Duration::from_secs(10));
    assert_eq!(
        config.get_keepalives_interval(),
        Some(Duration::from_secs(2))
    );
    assert_eq!(config.get_keepalives_retries(), Some(3));
    // What the DSN sets stays (the postgres crate reads tcp_user_timeout in seconds, where
    // libpq reads milliseconds); a short timeout still connects for at least 2 s.
    let mut config: postgres::Config =
        "host=h user=u connect_timeout=9 keepalives_idle=30 tcp_user_timeout=7"
            .parse()
            .unwrap();
    tcp_timeouts(&mut config, Duration::from_millis(500));
    assert_eq!(config.get_connect_timeout(), Some(&Duration::from_secs(9)));
    assert_eq!(config.get_keepalives_idle(), Duration::from_secs(30));
    assert_eq!(config.get_tcp_user_timeout(), Some(&Duration::from_secs(7)));
    let mut config: postgres::Config = "host=h user=u".parse().unwrap();
    tcp_timeouts(&mut config, Duration::from_millis(500));
    assert_eq!(config.get_connect_timeout(), Some(&Duration::from_secs(2)));
    assert_eq!(
        config.get_tcp_user_timeout(),
        Some(&Duration::from_millis(500))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlx_a_silent_server_is_unavailable_within_the_timeout() {
    let port = silent_server();
    let timeout = Duration::from_millis(700);
    let registry = AsyncRegistry::connect(&format!("postgres://postgres@127.0.0.1:{port}/x"))
        .unwrap()
        .timeout(timeout);
    for lease in [None, Some(Duration::from_secs(5))] {
        let beside = Beside::start(timeout);
        let t = Instant::now();
        let r = registry.snowflake(lease).await;
        let took = t.elapsed();
        assert_unavailable(r, took, timeout, beside.lag());
    }
}
