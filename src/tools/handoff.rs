//! `handoff`: the agent hands work to a peer as the next round of a
//! collaboration. Decided by [`crate::collab::handoff::plan`]; here the
//! record is written and the handoff posted in this home's own `outbox/`
//! (the peer's supervisor takes it from there), both in the tick's commit.

use super::{ToolContext, ToolError};
use crate::atomic;
use crate::collab::handoff::{self, Request};
use crate::collab::store;
use crate::mailbox::outbox::{self, Letter};

pub(super) fn run(ctx: &mut ToolContext<'_>, request: Request) -> Result<String, ToolError> {
    let peering = &ctx.peering;
    let existing = match &request.collaboration {
        Some(slug) => store::load(ctx.home, slug).map_err(failed)?,
        None => None,
    };
    let exists = |slug: &str| ctx.home.path(&store::rel_path(slug)).exists();
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
            if let handoff::Refusal::MaxRounds { slug, max } = &refusal {
                flare_max_rounds(ctx, slug, *max);
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
    let rel = format!(
        "{}/{}-handoff-{}-{}-to-{}.md",
        crate::home::layout::rel::OUTBOX,
        ctx.now.format("%Y%m%dT%H%M%S%.3fZ"),
        h.collaboration.slug,
        h.round,
        h.to
    );
    atomic::write(&ctx.home.path(&rel), h.render().as_bytes()).map_err(failed)?;
    ctx.effects.touch(rel.clone());
    Ok(format!(
        "handed to {} as round {} of {} ({rel})",
        h.to, h.round, h.collaboration.slug
    ))
}

/// Past `[collaborations] max_rounds`: one flare for this home's operator
/// (once per collaboration and limit).
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
    let mut flare = Letter::flare("collab", subject, body);
    flare.tick = Some(ctx.tick);
    if let Ok(rel) = outbox::post(ctx.home, &flare, ctx.now) {
        ctx.effects.touch(rel);
    }
}

fn failed(e: impl std::fmt::Display) -> ToolError {
    ToolError::Failed {
        tool: "handoff".into(),
        message: e.to_string(),
    }
}
