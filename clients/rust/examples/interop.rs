//! The Rust client's part of the cross-client interop check (tests/interop/run.sh):
//! `interop make DIR` writes DIR/rust.ids (`Xid::new()`, `Snowflake::new(2)`); `interop read DIR`
//! reads every DIR/*.ids and writes DIR/rust.read (tests/interop/README.md).
use pg_idgen_client::snowflake::{self, DEFAULT_EPOCH_MS};
use pg_idgen_client::{Snowflake, Xid};
use std::{env, fs, path::Path};

const N: usize = 300;

fn make(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let flakes = Snowflake::new(2)?;
    let mut lines: Vec<String> = (0..N).map(|_| format!("x {}", Xid::new())).collect();
    for _ in 0..N {
        lines.push(format!("s {}", flakes.next_id()?));
    }
    fs::write(dir.join("rust.ids"), lines.join("\n") + "\n")?;
    Ok(())
}

fn read(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut files: Vec<_> = fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.retain(|p| p.extension().is_some_and(|e| e == "ids"));
    files.sort();
    let (mut xids, mut flakes, mut out) = (Vec::new(), Vec::new(), Vec::new());
    for f in files {
        for line in fs::read_to_string(&f)?.lines() {
            let (kind, value) = line.split_once(' ').ok_or("a line without a space")?;
            if kind == "x" {
                let x = Xid::parse(value)?;
                let m = x.machine();
                let machine = u32::from_be_bytes([0, m[0], m[1], m[2]]);
                out.push(format!(
                    "x {x} {} {machine} {} {}",
                    x.unix_seconds(),
                    x.pid(),
                    x.counter()
                ));
                xids.push(x);
            } else {
                let s: i64 = value.parse()?;
                out.push(format!(
                    "s {s} {} {} {}",
                    snowflake::unix_ms(s, DEFAULT_EPOCH_MS)?,
                    snowflake::worker(s)?,
                    snowflake::sequence(s)?
                ));
                flakes.push(s);
            }
        }
    }
    xids.sort();
    flakes.sort();
    out.extend(xids.iter().map(|x| format!("ox {x}")));
    out.extend(flakes.iter().map(|s| format!("os {s}")));
    fs::write(dir.join("rust.read"), out.join("\n") + "\n")?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = env::args().collect();
    let dir = Path::new(args.get(2).ok_or("usage: interop make|read DIR")?);
    match args[1].as_str() {
        "make" => make(dir),
        "read" => read(dir),
        other => Err(format!("usage: interop make|read DIR (not {other})").into()),
    }
}
