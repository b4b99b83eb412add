//! The extension's settings (`pg_idgen.*`).

use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};

/// -1: derive the xid12 machine id from the host name.
pub static MACHINE_ID: GucSetting<i32> = GucSetting::<i32>::new(-1);

pub fn register() {
    GucRegistry::define_int_guc(
        c"pg_idgen.machine_id",
        c"Machine id (0 .. 16777215) written into every new xid12; -1 derives it from the host name.",
        c"The default, -1, uses the first 3 bytes of md5(host name) as rs/xid does. Set it when host names may repeat across machines that write into the same tables.",
        &MACHINE_ID,
        -1,
        0x00ff_ffff,
        GucContext::Suset,
        GucFlags::default(),
    );
}
