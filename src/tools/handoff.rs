//! `handoff`: the agent hands work to a peer as the next round of a
//! collaboration. Decided by [`crate::collab::handoff::plan`]; here the
//! record is written and the handoff posted in this home's own `outbox/`
//! (the peer's supervisor takes it from there), both in the tick's commit.

use super::{ToolContext, ToolError};
use crate::atomic;
use crate::collab::handoff::{self, Handoff, HandoffAsk};
use crate::collab::{store, Change, Collaboration};
use crate::mailbox::cause::Cause;
use crate::mailbox::outbox::{self, Letter};

pub(super) fn run(ctx: &mut ToolContext<'_>, request: HandoffAsk) -> Result<String, ToolError> {
    let request = against_the_home(ctx, request)?;
    let peering = &ctx.peering;
    let existing = match &request.collaboration {
        Some(slug) => store::load(ctx.home, slug).map_err(failed)?,
        None => None,
    };
    let exists = |slug: &str| has_record(ctx, slug);
    let plan = handoff::plan(
        &peering.me,
        &peering.peers,
        &peering.settings,
        &request,
        existing,
        exists,
        ctx.now,
    );
    let plan = match plan {
        Ok(plan) => plan,
        Err(refusal) => {
            match &refusal {
                handoff::HandoffRefusal::MaxRounds { slug, max } => {
                    flare_max_rounds(ctx, slug, *max)
                }
                handoff::HandoffRefusal::Repeat { slug, round } => ctx.effects.loops.push(format!(
                    "handed {} the same message as round {round} of {slug} again (agents \
                     handing off without progress)",
                    request.to
                )),
                _ => {}
            }
            return Err(ToolError::Refused {
                tool: "handoff".into(),
                message: refusal.to_string(),
            });
        }
    };
    let record = store::save(ctx.home, &plan.record).map_err(failed)?;
    ctx.effects.touch(record);
    let h = &plan.handoff;
    let rel = post(ctx, h).map_err(failed)?;
    Ok(format!(
        "handed to {} as round {} of {} ({rel})",
        h.to, h.round, h.collaboration.slug
    ))
}

/// What [`handoff::plan`] cannot see, checked against the home and the
/// tool limits: the message's size, that the founding memory exists, and
/// the slug of a collaboration the model named as people do ("Design X").
fn against_the_home(
    ctx: &ToolContext<'_>,
    mut request: HandoffAsk,
) -> Result<HandoffAsk, ToolError> {
    let refused = |message: String| ToolError::Refused {
        tool: "handoff".into(),
        message,
    };
    if request.message.len() as u64 > ctx.max_write_bytes {
        return Err(refused(format!(
            "the message is {} bytes, more than [tools] max_write_bytes ({}): write the work \
             into the collaboration's workdir or a memory, and hand off a message that points \
             to it",
            request.message.len(),
            ctx.max_write_bytes
        )));
    }
    if let Some(memory) = request
        .founded_by
        .as_deref()
        .filter(|_| request.name.is_some())
    {
        let under_memory = memory.starts_with("memory/") && !memory.contains("..");
        if !under_memory || !ctx.home.path(memory).is_file() {
            return Err(refused(format!(
                "founded_by {memory:?} is not a memory of yours: write it first (a path under \
                 memory/), or leave founded_by out"
            )));
        }
    }
    if let Some(given) = &request.collaboration {
        let slug = crate::collab::slug_for(given);
        if !has_record(ctx, given) && has_record(ctx, &slug) {
            request.collaboration = Some(slug);
        }
    }
    Ok(request)
}

fn has_record(ctx: &ToolContext<'_>, slug: &str) -> bool {
    crate::collab::valid_slug(slug) && ctx.home.path(&store::rel_path(slug)).exists()
}

/// Posts a handoff or notice in this home's outbox, for the tick's commit.
fn post(ctx: &mut ToolContext<'_>, h: &Handoff) -> Result<String, atomic::WriteError> {
    let rel = store::post(ctx.home, h, ctx.now)?;
    ctx.effects.touch(rel.clone());
    Ok(rel)
}

/// Tells `c`'s other participants (those among this agent's peers) that
/// `what` happened.
fn notify_peers(ctx: &mut ToolContext<'_>, c: &Collaboration, what: &str, message: &str) {
    let me = ctx.peering.me.clone();
    let peers: Vec<String> = c
        .participants
        .iter()
        .filter(|p| **p != me && ctx.peering.peers.contains_key(*p))
        .cloned()
        .collect();
    for peer in peers {
        let notice = handoff::notice(&me, &peer, c, what, message.to_string(), ctx.now);
        if let Err(e) = post(ctx, &notice) {
            tracing::warn!("could not tell {peer} that {} is {what}: {e}", c.slug);
        }
    }
}

/// After the tool loop: a memory written this tick with `closes: SLUG` in
/// its front matter completes that collaboration here and tells its
/// other participants (a notice each, which their supervisors take into
/// their inboxes and records).
pub fn close_collaborations(ctx: &mut ToolContext<'_>) {
    let written: Vec<String> = ctx
        .effects
        .touched
        .iter()
        .filter(|r| r.starts_with("memory/"))
        .cloned()
        .collect();
    for rel in written {
        let Ok(text) = std::fs::read_to_string(ctx.home.path(&rel)) else {
            continue;
        };
        let Some(slug) = handoff::closes(&text) else {
            continue;
        };
        let Ok(Some(mut c)) = store::load(ctx.home, &slug) else {
            continue;
        };
        let me = ctx.peering.me.clone();
        if c.change(Change::Complete, &me, &format!("closes: {rel}"), ctx.now)
            .is_err()
        {
            continue; // complete already, or abandoned
        }
        match store::save(ctx.home, &c) {
            Ok(record) => ctx.effects.touch(record),
            Err(e) => {
                tracing::warn!("could not complete {slug}: {e}");
                continue;
            }
        }
        let message = format!(
            "{me} completed collaboration \"{}\" ({slug}): {rel} closes it.",
            c.name
        );
        notify_peers(ctx, &c, "complete", &message);
    }
}

/// Past `[collaborations] max_rounds`: one flare for this home's operator
/// and one notice to each other participant, whose supervisor flares its
/// own operator (once per collaboration and limit).
fn flare_max_rounds(ctx: &mut ToolContext<'_>, slug: &str, max: u32) {
    let subject = format!("collaboration {slug} reached its {max} rounds");
    let already = crate::mailbox::flares::names(ctx.home).iter().any(|name| {
        std::fs::read_to_string(ctx.home.outbox_dir().join(name))
            .is_ok_and(|t| t.contains(&format!("subject: \"{subject}\"")))
    });
    if already {
        return;
    }
    let body = format!(
        "The agent tried to hand off in collaboration {slug} past [collaborations] max_rounds = \
         {max}; the handoff was refused. Read collaborations/{slug}.md: if the rounds still make \
         progress, raise max_rounds; else `hearth collab complete {slug}` or `abandon` it."
    );
    let mut flare = Letter::flare(Cause::Collab, subject, body);
    flare.tick = Some(ctx.tick);
    if let Ok(rel) = outbox::post(ctx.home, &flare, ctx.now) {
        ctx.effects.touch(rel);
    }
    if let Ok(Some(c)) = store::load(ctx.home, slug) {
        let message = format!(
            "{} tried to hand off in collaboration \"{}\" ({slug}) past its {max} rounds \
             ([collaborations] max_rounds); the handoff was refused.",
            ctx.peering.me, c.name
        );
        notify_peers(ctx, &c, "max-rounds", &message);
    }
}

fn failed(e: impl std::fmt::Display) -> ToolError {
    ToolError::Failed {
        tool: "handoff".into(),
        message: e.to_string(),
    }
}
