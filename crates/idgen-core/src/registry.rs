//! The writer registry's refusals, one condition per SQLSTATE (docs/formats.md, "Writer
//! registry: errors"; the shared vectors tests/vectors/registry_errors.json list them, with
//! the error class each client names them by).
//!
//! A client tells the registry's refusals apart by the SQLSTATE alone:
//! [`RegistryCondition::from_sqlstate`] names the condition of a code, `None` for a code
//! the contract does not list (a plain registry error). Two conditions share a class:
//! [`RegistryCondition::GrantMissing`] (42704, no such grant) is shown as `GrantLost`, as
//! [`RegistryCondition::GrantLost`] (55000) is: either way the writer acquires a new grant.
//!
//! A fenced registry (IG001) names in its message the moment its fence ends:
//! [`RegistryCondition::fenced_until`] reads it (the text form is
//! [`pgtime::parse_utc_micros`]'s).

use crate::pgtime;

/// One refusal of the writer registry: its SQLSTATE, and the error class the clients raise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegistryCondition {
    /// IG001: after a failover, a point-in-time recovery or a restore, the registry grants
    /// nothing of this kind in this pool until a lost grant must have ended (the message ends
    /// with that moment: [`RegistryCondition::fenced_until`]).
    Fenced,
    /// IG002: the caller's role may not take grants in this pool.
    PoolNotAllowed,
    /// IG003: the caller's role holds its cap of live grants in this pool.
    CapReached,
    /// IG004: the lease asked for is longer than the pool allows for this kind.
    LeaseTooLong,
    /// IG005: `pg_idgen.snowflake_epoch` differs from the epoch of the registry's Snowflake
    /// grants.
    EpochChanged,
    /// IG006: an edge device reports an id outside its grant's window.
    ReportOutsideWindow,
    /// 55000: the grant was released, had ended before a fence, or its slot's next id-time
    /// went to another writer: acquire a new grant.
    GrantLost,
    /// 42704: no such grant (a registry restored from before it was made): acquire a new
    /// grant. Its class is `GrantLost`.
    GrantMissing,
    /// 42501: a wrong token, a grant of another role, or a reservation (which has no token).
    WrongToken,
    /// 53400: every slot of the pool for this kind is held (the DETAIL says how many and when
    /// the first ends).
    SlotsExhausted,
    /// 23505: one grant is used by two edge devices (a copied device state).
    DeviceConflict,
}

use RegistryCondition::*;

/// Each condition with its name, SQLSTATE and class, in the vectors' order.
const TABLE: [(RegistryCondition, &str, &str, &str); 11] = [
    (Fenced, "fenced", "IG001", "RegistryFenced"),
    (
        PoolNotAllowed,
        "pool_not_allowed",
        "IG002",
        "PoolNotAllowed",
    ),
    (CapReached, "cap_reached", "IG003", "CapReached"),
    (LeaseTooLong, "lease_too_long", "IG004", "LeaseTooLong"),
    (EpochChanged, "epoch_changed", "IG005", "EpochChanged"),
    (
        ReportOutsideWindow,
        "report_outside_window",
        "IG006",
        "ReportOutsideWindow",
    ),
    (GrantLost, "grant_lost", "55000", "GrantLost"),
    (GrantMissing, "grant_missing", "42704", "GrantLost"),
    (WrongToken, "wrong_token", "42501", "WrongToken"),
    (SlotsExhausted, "slots_exhausted", "53400", "SlotsExhausted"),
    (DeviceConflict, "device_conflict", "23505", "DeviceConflict"),
];

/// What comes just before the moment at the end of a fenced registry's message.
const UNTIL: &str = "until ";

impl RegistryCondition {
    /// Every condition, in the vectors' order.
    pub const ALL: [RegistryCondition; 11] = [
        Fenced,
        PoolNotAllowed,
        CapReached,
        LeaseTooLong,
        EpochChanged,
        ReportOutsideWindow,
        GrantLost,
        GrantMissing,
        WrongToken,
        SlotsExhausted,
        DeviceConflict,
    ];

    fn row(self) -> &'static (RegistryCondition, &'static str, &'static str, &'static str) {
        // TABLE lists the variants in declaration order.
        &TABLE[self as usize]
    }

    /// The condition of a SQLSTATE as PostgreSQL reports it (five characters, upper case);
    /// `None` for a code the registry's contract does not list.
    pub fn from_sqlstate(code: &str) -> Option<RegistryCondition> {
        TABLE
            .iter()
            .find(|(_, _, sqlstate, _)| *sqlstate == code)
            .map(|(condition, ..)| *condition)
    }

    /// The SQLSTATE the registry raises for this condition.
    pub fn sqlstate(self) -> &'static str {
        self.row().2
    }

    /// The condition's name in the vectors (`"fenced"`, `"grant_missing"`, ...).
    pub fn name(self) -> &'static str {
        self.row().1
    }

    /// The error class the clients name this condition by (`"RegistryFenced"`, ...; both
    /// `GrantLost` and `GrantMissing` are `"GrantLost"`).
    pub fn class_name(self) -> &'static str {
        self.row().3
    }

    /// The moment a fenced registry's fence ends, in unix microseconds (UTC), from the message
    /// of its IG001 error: the message ends with `until ` and the moment written
    /// `YYYY-MM-DDTHH:MM:SS.ffffffZ`. `None` for a message without a moment in that form.
    pub fn fenced_until(message: &str) -> Option<i64> {
        let split = message.len().checked_sub(pgtime::UTC_MICROS_TEXT_LEN)?;
        let (head, moment) = (message.get(..split)?, message.get(split..)?);
        if !head.ends_with(UNTIL) {
            return None;
        }
        pgtime::parse_utc_micros(moment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_follows_the_declaration_order() {
        for (i, condition) in RegistryCondition::ALL.iter().enumerate() {
            assert_eq!(*condition as usize, i);
            assert_eq!(TABLE[i].0, *condition);
        }
    }

    #[test]
    fn fenced_until_needs_the_whole_form() {
        let moment = 1_796_380_512_345_678;
        for message in [
            "until 2026-12-04T10:35:12.345678Z",
            "the registry grants nothing until 2026-12-04T10:35:12.345678Z",
        ] {
            assert_eq!(RegistryCondition::fenced_until(message), Some(moment));
        }
        for message in [
            "",
            "2026-12-04T10:35:12.345678Z",
            "the registry grants nothing 2026-12-04T10:35:12.345678Z",
            "the registry grants nothing until2026-12-04T10:35:12.345678Z",
            "the registry grants nothing until 2026-12-04T10:35:12.345678Z.",
            "the registry grants nothing until 2026-12-04T10:35:12.345678Z\n",
            "the registry grants nothing until 2026-12-04 10:35:12.345678+00",
            "the registry grants nothing until 2026-12-04T10:35:12Z",
            // A multi-byte character where the moment would start: no panic, no moment.
            "until \u{e9}026-12-04T10:35:12.345678Z",
            "until 2026-12-04T10:35:12.345678\u{e9}",
        ] {
            assert_eq!(
                RegistryCondition::fenced_until(message),
                None,
                "{message:?}"
            );
        }
    }
}
