//! The high-water mark kept across restarts, its 36-byte file format with a CRC-32
//! (docs/formats.md §6), and the 16-byte lease record that carries it in WAL (§7).

use super::validate_epoch;

/// Why a high-water mark was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkKind {
    /// At a clean shutdown: the last id issued, exactly.
    Shutdown,
    /// While running: a lease, an id at least as high as every id issued so far.
    Lease,
}

/// A high-water mark kept across restarts: every id issued before is at most `id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    pub kind: MarkKind,
    /// A snowflake id (never negative).
    pub id: i64,
    /// The epoch (unix ms) in force when it was written; used to explain errors.
    pub epoch_ms: i64,
}

/// Why bytes read back are not a mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkFileError {
    /// Not [`Mark::FILE_LEN`] bytes long.
    WrongLength { len: usize },
    /// The bytes do not start with [`Mark::MAGIC`].
    BadMagic,
    /// A format version this code does not read.
    UnsupportedVersion { version: u32 },
    /// The checksum does not match the contents.
    BadChecksum,
    /// The checksum matches but a field is out of range.
    BadField,
}

/// CRC-32 (IEEE 802.3, the one of zlib and `cksum -a crc32b`), bit by bit: the mark is read
/// once per start and written about once a second, so speed does not matter.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

impl Mark {
    /// First bytes of a mark file.
    pub const MAGIC: [u8; 8] = *b"PGIDSNOW";
    /// Format version written.
    pub const VERSION: u32 = 1;
    /// Length of the encoded mark.
    pub const FILE_LEN: usize = 36;

    /// The file contents, little-endian: magic (8 bytes), version (u32), kind (u32: 1
    /// shutdown, 2 lease), id (i64), epoch_ms (i64), CRC-32 of the 32 bytes before (u32).
    pub fn encode(&self) -> [u8; Self::FILE_LEN] {
        let mut out = [0u8; Self::FILE_LEN];
        let kind: u32 = match self.kind {
            MarkKind::Shutdown => 1,
            MarkKind::Lease => 2,
        };
        out[0..8].copy_from_slice(&Self::MAGIC);
        out[8..12].copy_from_slice(&Self::VERSION.to_le_bytes());
        out[12..16].copy_from_slice(&kind.to_le_bytes());
        out[16..24].copy_from_slice(&self.id.to_le_bytes());
        out[24..32].copy_from_slice(&self.epoch_ms.to_le_bytes());
        let crc = crc32(&out[..32]);
        out[32..36].copy_from_slice(&crc.to_le_bytes());
        out
    }

    /// Reads back what [`Mark::encode`] wrote; anything else (truncated, damaged, another
    /// format) is an error, never a wrong mark.
    pub fn decode(bytes: &[u8]) -> Result<Mark, MarkFileError> {
        if bytes.len() != Self::FILE_LEN {
            return Err(MarkFileError::WrongLength { len: bytes.len() });
        }
        if bytes[0..8] != Self::MAGIC {
            return Err(MarkFileError::BadMagic);
        }
        let u32_at =
            |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let i64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[i..i + 8]);
            i64::from_le_bytes(b)
        };
        let version = u32_at(8);
        if version != Self::VERSION {
            return Err(MarkFileError::UnsupportedVersion { version });
        }
        if crc32(&bytes[..32]) != u32_at(32) {
            return Err(MarkFileError::BadChecksum);
        }
        let kind = match u32_at(12) {
            1 => MarkKind::Shutdown,
            2 => MarkKind::Lease,
            _ => return Err(MarkFileError::BadField),
        };
        let (id, epoch_ms) = (i64_at(16), i64_at(24));
        if id < 0 || validate_epoch(epoch_ms).is_err() {
            return Err(MarkFileError::BadField);
        }
        Ok(Mark { kind, id, epoch_ms })
    }
}

impl Mark {
    /// Length of a lease as logged in WAL ([`Mark::encode_wal_lease`]).
    pub const WAL_LEASE_LEN: usize = 16;

    /// The main data of the WAL record that carries a lease to standbys and to crash recovery,
    /// little-endian: id (i64), epoch_ms (i64). WAL has its own CRC and the record type says
    /// what it is, so there is no magic, version or checksum here; a new layout would be a new
    /// record type.
    pub fn encode_wal_lease(&self) -> [u8; Self::WAL_LEASE_LEN] {
        let mut out = [0u8; Self::WAL_LEASE_LEN];
        out[0..8].copy_from_slice(&self.id.to_le_bytes());
        out[8..16].copy_from_slice(&self.epoch_ms.to_le_bytes());
        out
    }

    /// Reads back what [`Mark::encode_wal_lease`] wrote, as a [`MarkKind::Lease`] mark; a
    /// wrong length or a value out of range is an error, never a wrong mark.
    pub fn decode_wal_lease(bytes: &[u8]) -> Result<Mark, MarkFileError> {
        if bytes.len() != Self::WAL_LEASE_LEN {
            return Err(MarkFileError::WrongLength { len: bytes.len() });
        }
        let i64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[i..i + 8]);
            i64::from_le_bytes(b)
        };
        let (id, epoch_ms) = (i64_at(0), i64_at(8));
        if id < 0 || validate_epoch(epoch_ms).is_err() {
            return Err(MarkFileError::BadField);
        }
        Ok(Mark {
            kind: MarkKind::Lease,
            id,
            epoch_ms,
        })
    }
}
