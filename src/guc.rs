//! The extension's settings (`pg_idgen.*`).

use idgen_core::snowflake::{self, DEFAULT_EPOCH_MS, DEFAULT_MAX_BACKWARD_MS, MAX_WORKER};
use idgen_core::xid;
use pgrx::{pg_guard, pg_sys, GucContext, GucFlags, GucRegistry, GucSetting};
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::OnceLock;

/// -1: derive the xid12 machine id from the host name.
static MACHINE_ID: GucSetting<i32> = GucSetting::<i32>::new(-1);

/// The machine id new xid12 values carry, resolved by the setting's assign hook so the
/// generator reads one integer.
static MACHINE: AtomicU32 = AtomicU32::new(0);

pub fn xid_machine() -> [u8; 3] {
    let [_, a, b, c] = MACHINE.load(Ordering::Relaxed).to_be_bytes();
    [a, b, c]
}

/// rs/xid's default: md5 of the host name, computed once per process.
fn host_machine() -> [u8; 3] {
    static HOST: OnceLock<[u8; 3]> = OnceLock::new();
    *HOST.get_or_init(|| {
        let host = std::fs::read("/proc/sys/kernel/hostname").unwrap_or_default();
        xid::machine_from_hostname(host.trim_ascii_end())
    })
}

#[pg_guard]
unsafe extern "C-unwind" fn assign_machine_id(newval: i32, _extra: *mut c_void) {
    let [a, b, c] = match xid::machine_from_int(newval.into()) {
        Ok(configured) => configured,
        Err(_) => host_machine(),
    };
    MACHINE.store(u32::from_be_bytes([0, a, b, c]), Ordering::Relaxed);
}

/// -1: unset; snowflake generation refuses to guess one. The worker id and the epoch are
/// set for the whole cluster (postgresql.conf or ALTER SYSTEM), never per session: every
/// backend shares one generator state, and a session with its own epoch would move that
/// state for everyone.
pub static WORKER_ID: GucSetting<i32> = GucSetting::<i32>::new(-1);

// The settings' names: registered below, and quoted in messages.
const MACHINE_ID_GUC: &CStr = c"pg_idgen.machine_id";
const WORKER_ID_GUC: &CStr = c"pg_idgen.worker_id";
const EPOCH_GUC: &CStr = c"pg_idgen.snowflake_epoch";
const MAX_BACKWARD_MS_GUC: &CStr = c"pg_idgen.snowflake_max_backward_ms";
pub const WORKER_ID_NAME: &str = name(WORKER_ID_GUC);
pub const EPOCH_NAME: &str = name(EPOCH_GUC);
pub const MAX_BACKWARD_MS_NAME: &str = name(MAX_BACKWARD_MS_GUC);

const fn name(guc: &'static CStr) -> &'static str {
    match guc.to_str() {
        Ok(name) => name,
        Err(_) => panic!("setting names are ASCII"),
    }
}

pub static MAX_BACKWARD_MS: GucSetting<i32> =
    GucSetting::<i32>::new(DEFAULT_MAX_BACKWARD_MS as i32);

/// Unix milliseconds do not fit an integer setting, so the epoch is a string setting whose
/// check hook validates it and whose assign hook keeps the parsed value here.
static EPOCH_TEXT: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(DEFAULT_EPOCH_TEXT));

/// `DEFAULT_EPOCH_MS` in decimal, made at compile time for the setting's default.
const DEFAULT_EPOCH_TEXT: &CStr = match CStr::from_bytes_with_nul(&DEFAULT_EPOCH_DIGITS) {
    Ok(text) => text,
    Err(_) => panic!("one NUL, at the end"),
};
const DEFAULT_EPOCH_DIGITS: [u8; decimal_len(DEFAULT_EPOCH_MS) + 1] = decimal(DEFAULT_EPOCH_MS);

const fn decimal_len(mut n: i64) -> usize {
    let mut len = 1;
    while n >= 10 {
        n /= 10;
        len += 1;
    }
    len
}

/// The digits of `n` (not negative) followed by a NUL.
const fn decimal<const N: usize>(mut n: i64) -> [u8; N] {
    let mut out = [0u8; N];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        out[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out
}

static EPOCH_MS: AtomicI64 = AtomicI64::new(DEFAULT_EPOCH_MS);

pub fn snowflake_epoch_ms() -> i64 {
    EPOCH_MS.load(Ordering::Relaxed)
}

fn parse_epoch(text: &CStr) -> Option<i64> {
    let ms = text.to_str().ok()?.trim().parse::<i64>().ok()?;
    snowflake::validate_epoch(ms).ok().map(|_| ms)
}

#[pg_guard]
unsafe extern "C-unwind" fn check_epoch(
    newval: *mut *mut c_char,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    let text = *newval;
    if !text.is_null() && parse_epoch(CStr::from_ptr(text)).is_some() {
        return true;
    }
    pg_sys::GUC_check_errdetail_string = pg_sys::pstrdup(
        c"The snowflake epoch is a whole number of milliseconds since 1970-01-01 00:00 UTC, not negative.".as_ptr(),
    );
    false
}

#[pg_guard]
unsafe extern "C-unwind" fn assign_epoch(newval: *const c_char, _extra: *mut c_void) {
    if let Some(ms) = (!newval.is_null())
        .then(|| parse_epoch(CStr::from_ptr(newval)))
        .flatten()
    {
        EPOCH_MS.store(ms, Ordering::Relaxed);
    }
}

/// Text for a setting's description, made once when the library loads.
fn described(text: String) -> &'static CStr {
    Box::leak(CString::new(text).expect("no NUL").into_boxed_c_str())
}

pub fn register() {
    unsafe {
        GucRegistry::define_int_guc_with_hooks(
        MACHINE_ID_GUC,
        described(format!(
            "Machine id (0 .. {}) written into every new xid12; -1 derives it from the host name.",
            xid::MAX_MACHINE
        )),
        c"The default, -1, uses the first 3 bytes of md5(host name) as rs/xid does. Set it when host names may repeat across machines that write into the same tables.",
        &MACHINE_ID,
        -1,
        xid::MAX_MACHINE as i32,
        GucContext::Suset,
        GucFlags::default(),
        None,
        Some(assign_machine_id),
        None,
    );
    }
    GucRegistry::define_int_guc(
        WORKER_ID_GUC,
        described(format!(
            "Snowflake worker id of this cluster (0 .. {MAX_WORKER}); gen_snowflake() refuses to \
             run while it is -1."
        )),
        c"Give every cluster that writes snowflake ids into the same tables its own worker id.",
        &WORKER_ID,
        -1,
        MAX_WORKER as i32,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        MAX_BACKWARD_MS_GUC,
        c"How far the clock may step back, in milliseconds, before gen_snowflake() fails instead of waiting.",
        c"When the clock is behind the last issued snowflake id by at most this, gen_snowflake() waits for it to catch up.",
        &MAX_BACKWARD_MS,
        0,
        60_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    unsafe {
        GucRegistry::define_string_guc_with_hooks(
            EPOCH_GUC,
            c"Epoch of snowflake ids, in unix milliseconds.",
            described(format!(
                "The default is {DEFAULT_EPOCH_MS}. Changing it changes what existing ids \
                 decode to."
            )),
            &EPOCH_TEXT,
            GucContext::Sighup,
            GucFlags::default(),
            Some(check_epoch),
            Some(assign_epoch),
            None,
        );
    }
}
