//! An exchange built once for a door, then run (DESIGN 3, 10). As a
//! command line becomes one set of resolved arguments that everything
//! reads, a door's [`Opening`] — what it states about its exchange: the
//! turn, the system blocks, the brake's gate, the outside content it
//! carries, which tools — becomes one [`Exchange`]: the tool context, the
//! tool specs and the provider resolved here, the same way for the tick,
//! the ask and a consolidation. Running it returns the [`Outcome`] the door
//! records.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::class::Failure;
use super::door::Door;
use super::driver::{self, Given};
use super::outcome::Outcome;
use super::{cost_usd, ExchangeError};
use crate::brake::gate::Gate;
use crate::config::Config;
use crate::conversation::store::Conversation;
use crate::home::Home;
use crate::model::{self, ModelError, Provider, SystemBlock, ToolSpec, TurnFacts};
use crate::tools::{self, Offered, Peering, ToolContext, Workdir, WriteAhead};

/// What a door states about its exchange; everything else is resolved the
/// same way for every door.
pub struct Opening<'a> {
    /// The tick the exchange belongs to (0: an ask).
    pub number: u64,
    /// Its "now".
    pub now: DateTime<Utc>,
    /// The provider's key, read from the environment by the caller.
    pub api_key: Option<&'a str>,
    /// The system blocks (prompt, identity layer).
    pub system: Vec<SystemBlock>,
    /// The conversation it continues, its last turn the door's.
    pub conversation: Conversation,
    /// What the offline model answers from.
    pub facts: TurnFacts,
    /// The brake's gate for its writing calls.
    pub gate: Gate,
    /// The outside content the turn carries from the start (a third
    /// party's message, a peer's handoff, piped stdin, …): its writes to
    /// identity are proposed from the first call.
    pub outside: crate::outside::Outside,
    /// Which tools, and how they may act.
    pub tools: Toolset<'a>,
}

/// The tools a door offers and how they may act.
pub struct Toolset<'a> {
    /// The operator's tools and their servers ([`Offered::default`]: the
    /// built-ins only).
    pub offered: Offered,
    /// Offer only the tools that do not write.
    pub read_only: bool,
    /// Writes go to a draft, and only the file tools are offered (a
    /// consolidation).
    pub staging: bool,
    /// The agent may ask for the next tick to wait (`sleep`).
    pub sleeps: bool,
    /// Its peers, for `handoff` ([`Peering::default`]: none).
    pub peering: Peering,
    /// Where operator tools run.
    pub workdir: Workdir,
    /// The environment operator tools take their variables from.
    pub environment: BTreeMap<String, String>,
    /// Told each file a tool is about to write, before it is written.
    pub write_ahead: Option<&'a WriteAhead<'a>>,
}

impl Toolset<'_> {
    /// The built-ins alone, in the home, writing.
    pub fn builtins() -> Toolset<'static> {
        Toolset {
            offered: Offered::default(),
            read_only: false,
            staging: false,
            sleeps: true,
            peering: Peering::default(),
            workdir: Workdir::Home,
            environment: BTreeMap::new(),
            write_ahead: None,
        }
    }
}

/// One exchange, resolved: ready to run.
pub struct Exchange<'a> {
    home: &'a Home,
    config: &'a Config,
    api_key: Option<&'a str>,
    system: Vec<SystemBlock>,
    specs: Vec<ToolSpec>,
    facts: TurnFacts,
    gate: Gate,
    provider: Result<Box<dyn Provider>, ModelError>,
    /// The calls' context: after the run, what they wrote, read and staged.
    pub tools: ToolContext<'a>,
    /// The conversation: after the run, with every turn kept.
    pub conversation: Conversation,
}

impl<'a> Exchange<'a> {
    /// Resolves `opening` in `home` under `config`: the tool context (its
    /// taint started with the turn's outside sources), the specs offered,
    /// the provider.
    pub fn open(home: &'a Home, config: &'a Config, opening: Opening<'a>) -> Exchange<'a> {
        let Opening {
            number,
            now,
            api_key,
            system,
            conversation,
            facts,
            gate,
            outside,
            tools: set,
        } = opening;
        let specs = if set.staging {
            tools::offered::staging_specs()
        } else {
            set.offered.specs(&set.peering, set.read_only)
        };
        let Offered {
            operator,
            trust,
            mcp,
            ..
        } = set.offered;
        let mut tools = ToolContext {
            environment: set.environment,
            peering: set.peering,
            workdir: set.workdir,
            write_ahead: set.write_ahead,
            mcp,
            ..ToolContext::new(home, config, number, now, operator, trust)
        };
        if !set.sleeps {
            tools.max_sleep_h = 0;
        }
        tools.taint.staging = set.staging;
        tools.taint.outside.add_from(&outside);
        tools.taint.shown_prompt(&system, &conversation.messages);
        Exchange {
            home,
            config,
            api_key,
            system,
            specs,
            facts,
            gate,
            provider: model::provider_for(&config.model, api_key),
            tools,
            conversation,
        }
    }

    /// Why no model can be asked (a key missing, a provider this build
    /// lacks), for a door that refuses rather than records it: an ask.
    pub fn model_error(&self) -> Option<ModelError> {
        self.provider.as_ref().err().cloned()
    }

    /// Runs the model and its tools until the exchange is over, telling
    /// `door` each thing as it happens; what it does is added to
    /// `so_far` (what the door did before: the recovery that made its
    /// request fit). A provider that could not be built is the outcome's
    /// failure, as a failed call is.
    pub fn run(&mut self, door: &mut Door<'_>, so_far: Outcome) -> Result<Outcome, ExchangeError> {
        let mut outcome = so_far;
        let provider = std::mem::replace(
            &mut self.provider,
            Err(ModelError::Call("the exchange already ran".into())),
        );
        match provider {
            Ok(provider) => driver::tool_loop(
                door,
                provider,
                &Given {
                    home: self.home,
                    config: self.config,
                    api_key: self.api_key,
                    system: &self.system,
                    specs: &self.specs,
                    facts: &self.facts,
                    gate: &self.gate,
                },
                &mut self.conversation,
                &mut self.tools,
                &mut outcome,
            )?,
            Err(e) => outcome.failures.push(Failure::of_model(&e)),
        }
        self.tools.effects.outside = self.tools.taint.outside.clone();
        outcome.effects = self.tools.effects.clone();
        outcome.cost_usd = cost_usd(&outcome.usage, self.config.price().as_ref());
        Ok(outcome)
    }
}
