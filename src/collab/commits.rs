//! The commits on both sides of a collaboration's rounds, for `hearth
//! collab show`. A record holds what its home knew when it wrote it: the
//! receiver writes both commits of a round it took (the sender's, read in
//! the sender's history, and its own intake); the sender learns them with
//! the peer's next handoff. Between the two, the rest is found here, read
//! only: in the peers' records (a peer on another host's as its mirror
//! holds it), and in this home's history for the rounds it handed off. A
//! round whose receiver's commit is known was delivered; one without, sent
//! and waiting.

use super::{store, Collaboration};
use crate::config::collab::{PeerAt, Peers};
use crate::home::Home;
use crate::repo::Repo;

/// Fills in the commits `c`'s record does not name yet.
pub fn fill(home: &Home, me: &str, peers: &Peers, c: &mut Collaboration) {
    let unknown = |c: &Collaboration| {
        c.rounds
            .iter()
            .any(|r| r.sent_in.is_none() || r.taken_in.is_none())
    };
    for peer in &c.participants.clone() {
        if !unknown(c) {
            return;
        }
        let Some(at) = peers.get(peer).filter(|_| peer != me) else {
            continue;
        };
        let theirs = match at {
            PeerAt::Path(path) => Home::at(path)
                .ok()
                .and_then(|h| store::load(&h, &c.slug).ok().flatten()),
            // A peer on another host: its record as its last push left it.
            PeerAt::Url(_) => Repo::open_mirror(&home.peer_mirror(peer))
                .ok()
                .flatten()
                .and_then(|m| m.read_at_head(&store::rel_path(&c.slug), 1 << 20)?.ok())
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .and_then(|text| super::record::parse(&text).ok()),
        };
        if let Some(theirs) = theirs {
            c.learn(&theirs.rounds);
        }
    }
    let Ok(repo) = Repo::open(home.root()) else {
        return;
    };
    let sent_here: Vec<usize> = (0..c.rounds.len())
        .filter(|&i| c.rounds[i].from == me && c.rounds[i].sent_in.is_none())
        .collect();
    for i in sent_here {
        let rel = store::handoff_rel(c, &c.rounds[i]);
        c.rounds[i].sent_in = repo.introduced(&rel, c.rounds[i].at);
    }
}
