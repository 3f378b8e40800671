//! What is open and what was flared, as the page shows it
//! (`/incidents`): each open incident with its flares, and the recent
//! flares whatever became of them — each flare with its words.

use std::collections::HashMap;

use crate::home::Home;
use crate::mailbox::flares::{self, Flare};
use crate::notify::incidents::{Incident, Incidents, NotifyStateError};

/// The incidents and the flares.
#[derive(Debug)]
pub struct IncidentsView {
    /// The open incidents, each with its flares newest first; or why the
    /// record cannot be read.
    pub open: Result<Vec<OpenIncident>, NotifyStateError>,
    /// The most recent flares, newest first.
    pub recent: Vec<FlareShown>,
}

/// An open incident and its flares.
#[derive(Debug)]
pub struct OpenIncident {
    /// The incident.
    pub incident: Incident,
    /// Its flares (those still in the outbox), newest first.
    pub flares: Vec<FlareShown>,
}

/// A flare and its words.
#[derive(Debug, Clone)]
pub struct FlareShown {
    /// The flare.
    pub flare: Flare,
    /// Its body.
    pub body: String,
}

/// The open incidents and the `recent` newest flares.
pub fn incidents(home: &Home, recent: usize) -> IncidentsView {
    let all = flares::list(home);
    let shown = |f: &Flare| FlareShown {
        flare: f.clone(),
        body: flares::body_of(home, f),
    };
    let by_id: HashMap<&str, &Flare> = all.iter().map(|f| (f.id.as_str(), f)).collect();
    let open = Incidents::load(home)
        .map_err(NotifyStateError::from)
        .map(|record| {
            record
                .open
                .into_values()
                .map(|incident| OpenIncident {
                    flares: incident
                        .flares
                        .iter()
                        .rev()
                        .filter_map(|id| by_id.get(id.as_str()).map(|f| shown(f)))
                        .collect(),
                    incident,
                })
                .collect()
        });
    IncidentsView {
        open,
        recent: all.iter().take(recent).map(shown).collect(),
    }
}
