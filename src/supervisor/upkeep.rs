//! The upkeep a commit leaves behind, each part on a thread of its own so
//! the main loop never waits for it: pushing the history (`[git] push`),
//! keeping recall's line origins up to HEAD, packing the history, fetching
//! the peers on other hosts. The
//! supervisor tells the component what happened (a commit, a tick, the
//! end); the component owns its threads and their state.

use std::time::Duration;

use super::{fetch, origins, packer, push, RunOptions};
use crate::config::Config;
use crate::home::Home;

/// How long the last push may take when the supervisor stops.
const LAST_PUSH: Duration = Duration::from_secs(10);

pub(super) struct Upkeep {
    /// The pushing thread, with `[git] push = true`.
    pusher: Option<push::Pusher>,
    /// The thread that keeps recall's line origins up to HEAD.
    origins: origins::Origins,
    /// The thread that packs the history.
    packer: packer::Packer,
    /// The thread that fetches the peers on other hosts.
    fetcher: Option<fetch::Fetcher>,
}

impl Upkeep {
    /// Starts the threads `config` asks for.
    pub(super) fn start(
        home: &Home,
        config: &Config,
        options: &RunOptions,
        waker: std::sync::mpsc::Sender<super::wake::Wake>,
    ) -> Upkeep {
        let pusher = config.git.push.then(|| {
            push::Pusher::start(
                home,
                push::PushSettings {
                    remote: config.git.remote.clone(),
                    flare_after: chrono::Duration::minutes(config.git.push_flare_min as i64),
                    credentials: options.remote_credentials.clone(),
                    clock: options.clock,
                },
            )
        });
        Upkeep {
            pusher,
            origins: origins::Origins::new(home),
            packer: packer::Packer::new(home),
            fetcher: fetch::Fetcher::start(
                home,
                config,
                options.remote_credentials.clone(),
                options.clock,
                waker,
            ),
        }
    }

    /// The supervisor is up: bring the line origins up to HEAD (pushing
    /// waits for the first commit).
    pub(super) fn started(&self) {
        self.origins.request();
    }

    /// A tick committed: push it and bring the line origins up to it.
    pub(super) fn committed(&self) {
        if let Some(pusher) = &self.pusher {
            pusher.request();
        }
        self.origins.request();
    }

    /// A tick ended: pack the history if it has grown past `[git]`'s limits.
    pub(super) fn tick_ended(&self, config: &Config) {
        self.packer.request(config);
    }

    /// The supervisor ran the ticks it was asked for: the pack it started
    /// is finished before it exits (a test, `--ticks`).
    pub(super) fn wait_for_pack(&self) {
        self.packer.wait();
    }

    /// The supervisor stops: what the last commits made goes off the box
    /// first, within [`LAST_PUSH`].
    pub(super) fn finish(&mut self) {
        if let Some(mut fetcher) = self.fetcher.take() {
            fetcher.finish();
        }
        if let Some(pusher) = self.pusher.take() {
            pusher.request();
            pusher.finish(LAST_PUSH);
        }
    }
}
