//! One tick, as the supervisor runs it: the child under its time limit,
//! the record of how it ended, the healer's count, the commit.

use crate::mailbox::cause::Clearing;
use std::time::Duration;

use super::child::{ChildEnd, TickChild};
use super::record::{self, record_for};
use super::{commit, Supervisor, SupervisorError, TickEnd};
use crate::exchange::class::Class;
use crate::exchange::ledger;
use crate::exchange::ledger::TickRecord;
use crate::exchange::report::TickReport;
use crate::healer::{self, Verdict};
use crate::io_hint::IoError;
use crate::jobs::turn::JobTurn;
use crate::notify::ping::Ping;
use crate::run_state::phase::{self, Phase, TickInProgress};

impl Supervisor<'_> {
    /// What this tick's end clears: a tick that exited 0 ends the model's
    /// and the conversation's troubles; one that ran (was not skipped)
    /// after a skipped one, or on a new UTC day, ends the budget's.
    fn clear_causes(&mut self, previous: Option<&TickRecord>, record: &TickRecord) {
        if record.class == Class::Ok {
            let why = format!("tick {} exited 0", record.tick);
            self.notices.clear(Clearing::GoodTick, &why);
            if record.quiet.is_none() {
                let why = format!("tick {} did what it was asked", record.tick);
                self.notices.clear(Clearing::UsefulTick, &why);
            }
        }
        // The budget's: what was said on an earlier UTC day, once a tick
        // runs (a warning said today stands until the stop or midnight).
        let midnight = record
            .start
            .date_naive()
            .and_time(chrono::NaiveTime::MIN)
            .and_utc();
        let new_day = previous.is_some_and(|p| p.end < midnight);
        let after_skips = previous.is_some_and(|p| p.class == Class::Skipped);
        if record.class != Class::Skipped && (new_day || after_skips) {
            let why = format!(
                "tick {} ran: the day's budget allows ticks again",
                record.tick
            );
            // After skipped ticks (the cap raised, or a new day) the stop
            // is over whenever it was said.
            let before = if after_skips { record.end } else { midnight };
            self.notices
                .clear_opened_before(Clearing::BudgetAllowsTicks, before, &why);
        }
        // Pushing and fetching run on threads of their own; what they last
        // said is on disk.
        if crate::run_state::push::PushState::load(self.home)
            .is_some_and(|p| p.failing_since.is_none())
        {
            self.notices
                .clear(Clearing::PushWorks, "pushing works again");
        }
        if self.config.mail.enabled()
            && crate::run_state::mail::MailWatch::load(self.home)
                .is_some_and(|m| m.last_ok.is_some() && m.failing_since.is_none())
        {
            self.notices.clear(Clearing::MailRead, "mail is read again");
        }
        let peers = crate::view::status::remote_peers(self.home, &self.config);
        if peers.iter().all(|p| p.failing_since.is_none()) && self.peers.all_readable() {
            self.notices.clear(
                Clearing::PeersReadable,
                "every peer can be fetched and read again",
            );
        }
    }

    /// Runs one tick to its end and commits it. Returns its record, the
    /// sleep it asked for, and a stop signal received meanwhile.
    pub(super) fn run_one_tick(
        &mut self,
        job: Option<&JobTurn>,
    ) -> Result<TickEnd, SupervisorError> {
        let clock = self.options.clock;
        let now = || clock.now();
        let previous = self.last_tick.clone();
        let number = previous.as_ref().map_or(0, |t| t.tick) + 1;
        let start = now();
        phase::clear_tick(self.home);
        phase::mark_tick(
            self.home,
            &TickInProgress {
                tick: number,
                start,
            },
        )?;
        self.set_phase(Phase::Ticking, Some(number), None);
        tracing::info!("tick {number} starting");
        self.notices.ping(Ping::Start);

        let ChildEnd { ending, note, stop } = match &self.options.in_process {
            Some(ticks) => self.tick_in_process(number, job, ticks),
            None => self.tick_as_child(number, job)?,
        };

        let report = TickReport::load_with_paid(self.home, number);
        let class = Class::from_exit(ending.code());
        let record = record_for(
            self.healer.last_answer,
            number,
            start,
            now(),
            ending.exit_number(),
            class,
            report.as_ref(),
            note,
        );
        let mut record = record;
        record.job = job.map(|j| j.name.clone());
        record.interrupted = stop.is_some() && record.class.is_failure();
        record.disk_full = record.class.is_failure()
            && !record.outage
            && !record.setting
            && !record.interrupted
            && self.disk_is_short(record.note.as_deref());
        if record.outage || record.setting {
            // Waits, backing off, as for an outage: a setting changed in
            // hearth.toml is read at the next try, which resumes ticking.
            let wait = healer::outage_backoff(&self.config.healer, self.healer.outages + 1);
            record.backoff_ms = Some(wait.as_millis() as u64);
        }
        record::give_back_messages(self.home, &mut record, report.as_ref())?;
        let verdict = self.finish_tick(&record, report.as_ref())?;
        tracing::info!(
            "tick {number}: exit {} ({})",
            record.exit,
            record.class.as_str()
        );
        self.notices.ping(Ping::after(record.exit));
        let calls = report.as_ref().map_or(0, |r| r.outcome.calls);
        let sleep_until = report.and_then(|r| r.outcome.effects.sleep_until);
        Ok(TickEnd {
            calls,
            record,
            sleep_until,
            stop,
            verdict,
        })
    }

    /// The config a tick runs with: told the interval it runs at
    /// (`--interval` included), since how long its prefix should stay
    /// cached depends on it.
    fn tick_config(&self) -> crate::config::Config {
        let mut config = self.config.clone();
        config.tick.interval_s = u64::try_from(self.interval().num_seconds()).unwrap_or(u64::MAX);
        config
    }

    /// Runs tick `number` here, as `hearth tick --supervised` runs it in a
    /// child: its report on disk (an error recorded in it), and the exit
    /// code the child would have ended with.
    fn tick_in_process(
        &self,
        number: u64,
        job: Option<&JobTurn>,
        ticks: &super::InProcessTicks,
    ) -> ChildEnd {
        let options = crate::tick::TickOptions {
            number,
            api_key: ticks.api_key.clone(),
            hooks: ticks.hooks.clone(),
            environment: ticks.environment.clone(),
            job: job.cloned(),
        };
        let now = self.options.clock.now();
        let code = match crate::tick::run(self.home, &self.tick_config(), &options, now) {
            Ok(report) => report.class().exit_code(),
            Err(e) => {
                let said = format!("{e} (hint: {})", e.hint());
                TickReport::record_error(self.home, number, &said);
                1
            }
        };
        ChildEnd {
            ending: super::child::Ending::Exited(code),
            note: None,
            stop: None,
        }
    }

    /// Runs tick `number` as a child process under its time limit, and
    /// reaps anything it left running in its group.
    fn tick_as_child(
        &mut self,
        number: u64,
        job: Option<&JobTurn>,
    ) -> Result<ChildEnd, SupervisorError> {
        let mut child = self.spawn_tick(number, job)?;
        let limit = Duration::from_secs(self.config.tick.timeout_s);
        let end = child
            .supervise(number, limit, &self.wake, self.options.sd_notify.as_ref())
            .map_err(|source| {
                let doing = format!("waiting for tick {number}");
                SupervisorError::Io(IoError::doing(doing, source))
            })?;
        child.signal_group(libc::SIGKILL);
        Ok(end)
    }

    /// Starts tick `number` (running `job`, if one) as a child process.
    fn spawn_tick(&self, number: u64, job: Option<&JobTurn>) -> Result<TickChild, SupervisorError> {
        let config = self.tick_config();
        TickChild::spawn(&self.options.exe, self.home, number, &config, job).map_err(|source| {
            SupervisorError::Spawn {
                exe: self.options.exe.clone(),
                source,
            }
        })
    }

    /// The tick's letters that answer mail: sent back to the operator, or
    /// held (`mail::reply`), and what that wrote committed by hearth.
    fn answer_mail(&mut self, record: &TickRecord) {
        if record.sent.is_empty() || !self.config.mail.enabled() {
            return;
        }
        let now = self.options.clock.now();
        let replied = crate::mail::reply::answer(
            self.home,
            &self.config.mail,
            &record.sent,
            &self.options.environment,
            now,
        );
        for rel in &replied.sent {
            tracing::info!("mail: {rel} sent to the operator");
        }
        for (rel, why) in &replied.failed {
            tracing::warn!("mail: {rel} was not sent: {why}");
        }
        if replied.written.is_empty() {
            return;
        }
        let mut paths: Vec<&str> = replied.written.iter().map(String::as_str).collect();
        paths.sort();
        paths.dedup();
        let committed = crate::home::lock::CommitLock::acquire(self.home)
            .map_err(|e| e.to_string())
            .and_then(|_lock| {
                self.repo
                    .commit(
                        &paths,
                        &crate::repo::Identity::hearth(),
                        "mail: replies",
                        now,
                    )
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = committed {
            tracing::warn!("mail: the replies' record was not committed: {e}");
        }
    }

    /// Records a tick in the ledger and the healer's count, commits it,
    /// clears the marker, and returns the healer's verdict.
    pub(super) fn finish_tick(
        &mut self,
        record: &TickRecord,
        report: Option<&TickReport>,
    ) -> Result<Verdict, SupervisorError> {
        let touched = report
            .map(|r| r.outcome.effects.touched.clone())
            .unwrap_or_default();
        healer::validate::validate(
            self.home,
            &self.repo,
            record.tick,
            &touched,
            self.options.clock.now(),
        )?;
        ledger::append(&self.home.ticks_path(), record)?;
        let previous = self.last_tick.replace(record.clone());
        self.record_spend(record, report)?;
        let verdict = healer::observe(
            &mut self.healer,
            record,
            &self.config.healer,
            self.options.clock.now(),
        );
        if record.quiet.is_some() && self.healer.quiet == self.config.healer.quiet_streak {
            self.quiet_flare(record)?;
        }
        self.speak_of_the_model_api(record, report)?;
        self.healer.save(self.home)?;
        // The incidents its flares open and its end clears are in its
        // commit, not in one of their own after it.
        self.notices.new_flares();
        self.clear_causes(previous.as_ref(), record);
        self.notices.remind_of_proposals();
        commit::commit_tick(
            self.home,
            &self.repo,
            record,
            &touched,
            self.options.clock.now(),
        )?;
        phase::clear_tick(self.home);
        self.answer_mail(record);
        self.upkeep.committed();
        Ok(verdict)
    }
}
