//! `state/healer_note.json`: what a heal tells the next tick. Written by the
//! heal, read into the next tick's user turn, and deleted by that tick at
//! its write-ahead, so it is consumed exactly once even if the tick fails.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::atomic;
use crate::exchange::class::Class;
use crate::home::Home;
use crate::json_file::{self, JsonFile, JsonFileError};

/// What a heal tells the next tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealerNote {
    /// When the heal ran.
    pub healed_at: DateTime<Utc>,
    /// The commit the conversation was restored from.
    pub restored_from: String,
    /// The failed ticks, with their classes.
    pub failed_ticks: Vec<(u64, Class)>,
    /// The messages put back into the inbox, counted by whose they are.
    #[serde(default, deserialize_with = "Requeued::either")]
    pub requeued: Requeued,
}

/// The messages a heal put back into the inbox, by whose they are: counts
/// only. A file name or a subject is a sender's words, and this note is
/// shown to the next tick whoever's messages those were — the messages
/// themselves arrive as inbox messages, each marked with its sender.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requeued {
    /// The operator's own (`hearth say`, a file with no sender header).
    pub operator: usize,
    /// From anyone else, or whose could not be told.
    pub others: usize,
}

impl Requeued {
    /// Reads today's counts, or an older note's list of file names, each
    /// counted as someone else's: whose it was was never recorded.
    fn either<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Requeued, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Counts(Requeued),
            Names(Vec<serde_json::Value>),
        }
        Ok(match Either::deserialize(d)? {
            Either::Counts(counts) => counts,
            Either::Names(names) => Requeued {
                operator: 0,
                others: names.len(),
            },
        })
    }

    /// No message was put back.
    pub fn is_empty(&self) -> bool {
        self.operator + self.others == 0
    }
}

impl JsonFile for HealerNote {
    const VERSION: u32 = 1;
}

fn path(home: &Home) -> std::path::PathBuf {
    home.healer_note_path()
}

impl HealerNote {
    /// Leaves the note for the next tick (the heal).
    pub fn write(&self, home: &Home) -> Result<(), atomic::WriteError> {
        json_file::save(&path(home), self)
    }

    /// The waiting note, if there is one. A note that cannot be read is an
    /// error naming the file: the tick sets it aside and flares
    /// ([`HealerNote::set_aside`]) instead of ignoring it for ever.
    pub fn read(home: &Home) -> Result<Option<HealerNote>, JsonFileError> {
        json_file::load(&path(home))
    }

    /// Moves a broken note aside (`healer_note.json.broken-<time>`, kept
    /// and committed) and returns where it went.
    pub fn set_aside(home: &Home, now: DateTime<Utc>) -> std::io::Result<String> {
        let from = path(home);
        let to = from.with_file_name(format!(
            "healer_note.json.broken-{}",
            now.format("%Y%m%dT%H%M%SZ")
        ));
        std::fs::rename(&from, &to)?;
        Ok(home.relative(&to))
    }

    /// Deletes the note (the tick has taken it into its conversation).
    pub fn consume(home: &Home) {
        let _ = std::fs::remove_file(path(home));
    }

    /// The note as the agent reads it.
    pub fn prose(&self) -> String {
        let classes: Vec<String> = self
            .failed_ticks
            .iter()
            .map(|(tick, class)| format!("tick {tick}: {}", class.as_str()))
            .collect();
        let mut text = format!(
            "Your last {} ticks failed ({}). hearth's healer restored your conversation from commit {} \
             at {}. Your memory files were not touched. Work out what went wrong before repeating it.",
            self.failed_ticks.len(),
            classes.join(", "),
            &self.restored_from[..self.restored_from.len().min(7)],
            crate::clock::to_second(self.healed_at)
        );
        let Requeued { operator, others } = self.requeued;
        let back = match (operator, others) {
            (0, 0) => None,
            (n, 0) => Some(format!("{n} of your operator's messages")),
            (0, m) => Some(format!("{m} message(s) from others than your operator")),
            (n, m) => Some(format!(
                "{n} of your operator's messages and {m} from others than your operator"
            )),
        };
        if let Some(back) = back {
            text.push_str(&format!(
                " {back}, read by the failed ticks, are back in your inbox: each comes again \
                 as a new message, marked with its sender."
            ));
        }
        text
    }
}
