//! What a tick's paid calls cost, kept where a full disk cannot lose it.
//!
//! The report (`.hearth/tick-report.json`) is rewritten atomically after
//! each paid call: a new file, then a rename. On a disk that filled
//! mid-tick that write fails, and a call the provider billed went missing
//! from the ledger and the budget. So the spend goes first into a slot
//! whose blocks are taken at the tick's start, while there is room
//! (`.hearth/tick-paid`): two halves written in turn in place, each with
//! a checksum. Writing in place into blocks a file already has needs no
//! new room; a half torn by a kill fails its checksum and the other half
//! stands. The supervisor takes the slot's count when it is ahead of the
//! report's.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};

use serde::{Deserialize, Serialize};

use crate::home::Home;
use crate::model::Usage;

/// The slot, beside the report.
pub const FILE: &str = ".hearth/tick-paid";

/// One half: far more than a record takes (about 300 bytes).
const HALF: usize = 2048;

/// The spend so far of tick `tick`, as of its `seq`-th paid call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Paid {
    /// The tick.
    pub tick: u64,
    /// Writes so far: the newer half wins.
    pub seq: u64,
    /// Model calls paid for.
    pub calls: u32,
    /// Their tokens, summed.
    pub usage: Usage,
    /// Their cost.
    pub cost_usd: f64,
}

/// The slot of the running tick, its blocks taken.
#[derive(Debug)]
pub struct PaidSlot {
    file: File,
    tick: u64,
    seq: u64,
}

impl PaidSlot {
    /// Takes the slot's blocks for tick `tick` (two halves of zeros,
    /// synced): done at the tick's start, while there is room.
    pub fn reserve(home: &Home, tick: u64) -> std::io::Result<PaidSlot> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(home.path(FILE))?;
        file.write_all(&[0u8; 2 * HALF])?;
        file.sync_all()?;
        Ok(PaidSlot { file, tick, seq: 0 })
    }

    /// Writes what the tick has paid so far into the older half, in place.
    pub fn write(&mut self, calls: u32, usage: Usage, cost_usd: f64) -> std::io::Result<()> {
        self.seq += 1;
        let paid = Paid {
            tick: self.tick,
            seq: self.seq,
            calls,
            usage,
            cost_usd,
        };
        let half = encode(&paid);
        let at = (self.seq % 2) * HALF as u64;
        self.file.seek(SeekFrom::Start(at))?;
        self.file.write_all(&half)?;
        self.file.sync_data()
    }
}

/// A half: the JSON, a newline, its checksum, a newline, zeros after.
fn encode(paid: &Paid) -> Vec<u8> {
    let json = serde_json::to_string(paid).expect("a spend serialises");
    let text = format!("{json}\n{:016x}\n", crate::stamp::fnv1a(json.as_bytes()));
    let mut half = text.into_bytes();
    half.truncate(HALF);
    half.resize(HALF, 0);
    half
}

/// The record a half holds, if it is whole.
fn decode(half: &[u8]) -> Option<Paid> {
    let end = half.iter().position(|b| *b == 0).unwrap_or(half.len());
    let text = std::str::from_utf8(&half[..end]).ok()?;
    let mut lines = text.lines();
    let (json, sum) = (lines.next()?, lines.next()?);
    let whole = format!("{:016x}", crate::stamp::fnv1a(json.as_bytes())) == sum;
    whole.then(|| serde_json::from_str(json).ok()).flatten()
}

/// What tick `tick` had paid at its last whole write, if its slot says.
pub fn of_tick(home: &Home, tick: u64) -> Option<Paid> {
    let mut bytes = Vec::new();
    File::open(home.path(FILE))
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .ok()?;
    bytes
        .chunks(HALF)
        .filter_map(decode)
        .filter(|p| p.tick == tick)
        .max_by_key(|p| p.seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home() -> (tempfile::TempDir, Home) {
        let dir = tempfile::tempdir().unwrap();
        let now = chrono::DateTime::from_timestamp(1_790_000_000, 0).unwrap();
        let home = crate::home::init(dir.path(), now).unwrap().home;
        (dir, home)
    }

    fn usage(input: u64) -> Usage {
        Usage {
            input_tokens: input,
            ..Usage::default()
        }
    }

    #[test]
    fn the_newest_whole_write_stands_and_the_file_never_grows() {
        let (_dir, home) = home();
        let mut slot = PaidSlot::reserve(&home, 7).unwrap();
        let size = std::fs::metadata(home.path(FILE)).unwrap().len();
        assert!(of_tick(&home, 7).is_none(), "nothing paid yet");
        for n in 1..=5 {
            slot.write(n, usage(1000 * n as u64), 0.01 * n as f64)
                .unwrap();
        }
        let paid = of_tick(&home, 7).unwrap();
        assert_eq!((paid.calls, paid.usage.input_tokens), (5, 5000));
        assert_eq!(std::fs::metadata(home.path(FILE)).unwrap().len(), size);
        assert!(
            of_tick(&home, 8).is_none(),
            "another tick's slot says nothing"
        );
    }

    #[test]
    fn a_torn_half_is_passed_over_for_the_other() {
        let (_dir, home) = home();
        let mut slot = PaidSlot::reserve(&home, 3).unwrap();
        slot.write(1, usage(100), 0.1).unwrap();
        slot.write(2, usage(200), 0.2).unwrap();
        // The second write (seq 2, the first half) torn by a kill.
        let mut bytes = std::fs::read(home.path(FILE)).unwrap();
        bytes[10] ^= 0x55;
        crate::atomic::write(&home.path(FILE), &bytes).unwrap();
        let paid = of_tick(&home, 3).unwrap();
        assert_eq!(paid.calls, 1, "the whole half stands: {paid:?}");
    }
}
