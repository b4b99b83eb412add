//! An edge device with the Rust client's `edge::EdgeStore`: the Rust twin of
//! clients/python/tests/server/edge_device.py (the same commands, SQLite tables and output
//! lines), run by clients/python/tests/server/test_seed003_edges.py as one device of seed 003.
//!
//! ```text
//! edge_device enrol    --db FILE --device NAME --dsn DSN [--lease-days D]
//! edge_device generate --db FILE --device NAME --rows N [--batch B] [--pause-ms MS]
//! edge_device sync     --db FILE --device NAME --dsn DSN
//! ```
//!
//! `enrol` takes a Snowflake grant and an xid12 grant of pool 'edge' (writer = the device
//! name). `generate` needs no server: it goes on from the rows already in the file up to N rows
//! in each of `events_sf` and `events_xid`, B rows per SQLite transaction (each row and the ids'
//! new marks committed together), printing "committed FIRST LAST" after each commit. When the
//! store refuses to make an id it prints "refused KIND MESSAGE" and exits 3. `sync` reports and
//! releases both grants.

use pg_idgen_client::edge::{EdgeStore, Kind};
use pg_idgen_client::Error;
use rusqlite::Connection;
use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

const KINDS: [Kind; 2] = [Kind::Snowflake, Kind::Xid12];
const TABLES: &str = "
CREATE TABLE IF NOT EXISTS events_sf (id INTEGER PRIMARY KEY, origin TEXT NOT NULL, payload TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events_xid (id BLOB PRIMARY KEY, origin TEXT NOT NULL, payload TEXT NOT NULL);";

type Failure = Box<dyn std::error::Error>;

struct Args {
    command: String,
    options: HashMap<String, String>,
}

impl Args {
    fn parse() -> Result<Args, Failure> {
        let mut it = std::env::args().skip(1);
        let command = it
            .next()
            .ok_or("usage: edge_device enrol|generate|sync --db FILE ...")?;
        let mut options = HashMap::new();
        while let Some(flag) = it.next() {
            let name = flag
                .strip_prefix("--")
                .ok_or_else(|| format!("unexpected argument {flag:?}"))?;
            let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
            options.insert(name.to_string(), value);
        }
        Ok(Args { command, options })
    }

    fn get(&self, name: &str) -> Result<&str, Failure> {
        self.options
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| format!("--{name} is required").into())
    }

    fn number<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, Failure> {
        match self.options.get(name) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{name}: not a number: {v:?}").into()),
        }
    }
}

/// Why a store made no id, named as the Python client's exception classes name it.
fn refusal(e: &Error) -> Option<&'static str> {
    match e {
        Error::EdgeClockBeforeWindow { .. } => Some("EdgeClockBeforeWindow"),
        Error::EdgeWindowEnded { .. } => Some("EdgeWindowEnded"),
        Error::EdgeCloned { .. } => Some("EdgeCloned"),
        Error::Edge { .. } => Some("EdgeError"),
        _ => None,
    }
}

fn generate(
    db: &Connection,
    device: &str,
    rows: i64,
    batch: i64,
    pause: Duration,
) -> Result<(), Failure> {
    db.execute_batch(TABLES)?;
    let sf = EdgeStore::new(db, Kind::Snowflake, Some(device))?;
    let xid = EdgeStore::new(db, Kind::Xid12, Some(device))?;
    let mut n: i64 = db.query_row("SELECT count(*) FROM events_sf", [], |r| r.get(0))?;
    while n < rows {
        let last = (n + batch).min(rows);
        let tx = db.unchecked_transaction()?;
        for i in n..last {
            let s = sf.next_id()?.snowflake().ok_or("not a Snowflake id")?;
            let x = xid.next_id()?.xid().ok_or("not an xid12")?;
            tx.execute(
                "INSERT INTO events_sf VALUES (?1, ?2, ?3)",
                (s, device, format!("{device} sf {i} {s}")),
            )?;
            tx.execute(
                "INSERT INTO events_xid VALUES (?1, ?2, ?3)",
                (&x.as_bytes()[..], device, format!("{device} xid {i} {x}")),
            )?;
        }
        tx.commit()?;
        println!("committed {n} {}", last - 1);
        n = last;
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
    }
    Ok(())
}

fn run(args: &Args, db: &Connection) -> Result<(), Failure> {
    let device = args.get("device")?;
    match args.command.as_str() {
        "generate" => generate(
            db,
            device,
            args.number("rows", 100)?,
            args.number("batch", 20)?,
            Duration::from_millis(args.number("pause-ms", 10)?),
        ),
        command @ ("enrol" | "sync") => {
            let mut pg = postgres::Client::connect(args.get("dsn")?, postgres::NoTls)?;
            let days: f64 = args.number("lease-days", 10.0)?;
            for kind in KINDS {
                let store = EdgeStore::new(db, kind, Some(device))?;
                if command == "enrol" {
                    let lease = Duration::from_secs_f64(days * 86_400.0);
                    let g = store.enrol(&mut pg, Some(device), lease, "edge")?;
                    println!("enrolled {} {} {}", kind.sql(), g.grant_id, g.slot);
                } else {
                    let g = store
                        .grant()?
                        .ok_or_else(|| format!("no {} grant to release", kind.sql()))?;
                    if store.sync(&mut pg, None)?.is_some() {
                        return Err("the grant is still held after a releasing sync".into());
                    }
                    println!("released {} {}", kind.sql(), g.grant_id);
                }
            }
            Ok(())
        }
        other => Err(format!("unknown command {other:?}: enrol, generate or sync").into()),
    }
}

fn main() -> ExitCode {
    let args = match Args::parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let db = match args
        .get("db")
        .and_then(|path| Connection::open(path).map_err(Into::into))
    {
        Ok(db) => db,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match run(&args, &db) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => match e.downcast_ref::<Error>().and_then(refusal) {
            Some(class) => {
                println!("refused {class} {e}");
                ExitCode::from(3)
            }
            None => {
                eprintln!("error: {e}");
                ExitCode::from(1)
            }
        },
    }
}
